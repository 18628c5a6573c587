//! The readers: [`MessageReader`] over `AsyncRead`, [`SyncMessageReader`]
//! over `std::io::Read`, both driving the same [`Decoder`].

use std::io::{self, Read};

use tokio::io::{AsyncRead, AsyncReadExt};

use super::decoder::Decoder;
use super::{DEFAULT_MAX_CONTENT_LENGTH, Frame, Message, READ_CHUNK};

/// Reads [`Frame`]s from an async byte stream (an editor's stdin, a language
/// server's stdout).
///
/// [`next`](Self::next) is cancel-safe: dropping its future (in a
/// `tokio::select!`) loses no bytes; the next call carries on.
///
/// ```
/// use ide_mcp_lsp::framing::{Frame, MessageReader};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let wire: &[u8] = b"Content-Length: 2\r\n\r\n{}oops";
/// let mut reader = MessageReader::new(wire);
/// let Some(Frame::Message(message)) = reader.next().await? else { panic!() };
/// assert_eq!(message.body(), b"{}");
/// assert_eq!(reader.next().await?, Some(Frame::Unframed(b"oops".to_vec())));
/// assert_eq!(reader.next().await?, None);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct MessageReader<R> {
    inner: R,
    decoder: Decoder,
    eof: bool,
}

impl<R: AsyncRead + Unpin> MessageReader<R> {
    /// A reader with the [`DEFAULT_MAX_CONTENT_LENGTH`].
    pub fn new(inner: R) -> Self {
        Self::with_max_content_length(inner, DEFAULT_MAX_CONTENT_LENGTH)
    }

    /// A reader that passes bodies longer than `limit` through unframed.
    pub fn with_max_content_length(inner: R, limit: u64) -> Self {
        Self {
            inner,
            decoder: Decoder::new(limit),
            eof: false,
        }
    }

    /// The next frame; `None` at the end of the stream, once every byte has
    /// been handed out.
    pub async fn next(&mut self) -> io::Result<Option<Frame>> {
        loop {
            if let Some(frame) = self.decoder.decode(self.eof) {
                return Ok(Some(frame));
            }
            if self.eof {
                return Ok(None);
            }
            let (target, limit) = self.decoder.read_target();
            let read = (&mut self.inner)
                .take(limit as u64)
                .read_buf(target)
                .await?;
            self.eof = read == 0;
        }
    }

    /// Hands a message's buffer back once its bytes are written out, to be
    /// reused for the next large message (optional; saves mapping fresh
    /// memory for every large `didOpen`).
    pub fn recycle(&mut self, message: Message) {
        self.decoder.recycle(message.into_bytes());
    }

    /// The underlying stream.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }
}

/// Reads [`Frame`]s from a blocking byte stream; the same framing as
/// [`MessageReader`].
///
/// ```
/// use ide_mcp_lsp::framing::{Frame, SyncMessageReader};
///
/// let wire: &[u8] = b"content-length: 2\n\n[]";
/// let mut reader = SyncMessageReader::new(wire);
/// let Some(Frame::Message(message)) = reader.next_frame()? else { panic!() };
/// assert_eq!(message.as_bytes(), wire);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct SyncMessageReader<R> {
    inner: R,
    decoder: Decoder,
    eof: bool,
    scratch: Box<[u8]>,
}

impl<R: Read> SyncMessageReader<R> {
    /// A reader with the [`DEFAULT_MAX_CONTENT_LENGTH`].
    pub fn new(inner: R) -> Self {
        Self::with_max_content_length(inner, DEFAULT_MAX_CONTENT_LENGTH)
    }

    /// A reader that passes bodies longer than `limit` through unframed.
    pub fn with_max_content_length(inner: R, limit: u64) -> Self {
        Self {
            inner,
            decoder: Decoder::new(limit),
            eof: false,
            scratch: vec![0; READ_CHUNK].into_boxed_slice(),
        }
    }

    /// Hands a message's buffer back for reuse (see [`MessageReader::recycle`]).
    pub fn recycle(&mut self, message: Message) {
        self.decoder.recycle(message.into_bytes());
    }

    /// The next frame; `None` at the end of the stream.
    pub fn next_frame(&mut self) -> io::Result<Option<Frame>> {
        Ok(self
            .next_frame_streaming(usize::MAX, &mut |_| {})?
            .map(|streamed| streamed.frame))
    }

    /// The next frame, like [`next_frame`](Self::next_frame), except that a
    /// message of `stream_from` bytes or more (headers included) that does
    /// not arrive in one read is handed to `forward` piece by piece as it
    /// arrives, every byte exactly once and in order, before this returns
    /// it whole: a proxy forwards a large message while the rest of it is
    /// still on its way, instead of holding the whole of it first.
    ///
    /// ```
    /// use std::io::Read as _;
    ///
    /// use ide_mcp_lsp::framing::SyncMessageReader;
    ///
    /// let (header, body) = (b"Content-Length: 300\r\n\r\n", [b' '; 300]);
    /// let wire = [header.as_slice(), &body].concat();
    /// // The header arrives first, then the body.
    /// let mut reader = SyncMessageReader::new(header.chain(body.as_slice()));
    /// let mut forwarded = Vec::new();
    /// let streamed = reader
    ///     .next_frame_streaming(100, &mut |bytes| forwarded.extend_from_slice(bytes))?
    ///     .unwrap();
    /// assert!(streamed.forwarded);
    /// assert_eq!(forwarded, wire);
    /// assert_eq!(streamed.frame.as_bytes(), wire);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn next_frame_streaming(
        &mut self,
        stream_from: usize,
        forward: &mut dyn FnMut(&[u8]),
    ) -> io::Result<Option<Streamed>> {
        // How many bytes of the message in progress went to `forward`.
        let mut forwarded = 0;
        loop {
            if let Some(frame) = self.decoder.decode(self.eof) {
                if forwarded > 0 {
                    forward(&frame.as_bytes()[forwarded..]);
                }
                return Ok(Some(Streamed {
                    frame,
                    forwarded: forwarded > 0,
                }));
            }
            if self.eof {
                return Ok(None);
            }
            if let Some((so_far, total)) = self.decoder.in_progress() {
                if total >= stream_from && so_far.len() > forwarded {
                    forward(&so_far[forwarded..]);
                    forwarded = so_far.len();
                }
                self.read_body()?;
                continue;
            }
            let (target, limit) = self.decoder.read_target();
            // Read into a scratch buffer zeroed once, then copy what came:
            // zeroing the target's free space before each read would cost a
            // chunk per small message, and the whole rest of a large body at
            // every read of a pipe (64 KiB at a time), O(body²).
            let scratch = &mut self.scratch[..limit.min(READ_CHUNK)];
            let read = loop {
                match self.inner.read(scratch) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    result => break result,
                }
            }?;
            target.extend_from_slice(&scratch[..read]);
            self.eof = read == 0;
        }
    }

    /// Reads more of the body in progress straight into the message's
    /// buffer, which has room for all of it: `read_to_end` fills a vector's
    /// free space without zeroing it first, and a pipe hands over up to its
    /// whole content at once.
    fn read_body(&mut self) -> io::Result<()> {
        let (target, want) = self.decoder.read_target();
        let want = want.min(BODY_CHUNK);
        // `read_to_end` retries interrupted reads itself; it stops at `want`
        // bytes or at the end of the stream.
        let read = (&mut self.inner).take(want as u64).read_to_end(target)?;
        self.eof = read < want;
        Ok(())
    }
}

/// At most how much of a body [`SyncMessageReader`] reads before handing
/// what came to its caller's `forward`.
const BODY_CHUNK: usize = 1024 * 1024;

/// A frame from [`SyncMessageReader::next_frame_streaming`].
#[derive(Debug)]
pub struct Streamed {
    /// The frame, whole.
    pub frame: Frame,
    /// Whether its bytes already went to `forward`.
    pub forwarded: bool,
}

impl<R: Read> Iterator for SyncMessageReader<R> {
    type Item = io::Result<Frame>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_frame().transpose()
    }
}
