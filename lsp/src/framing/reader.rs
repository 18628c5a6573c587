//! The readers: [`MessageReader`] over `AsyncRead`, [`SyncMessageReader`]
//! over `std::io::Read`, both driving the same [`Decoder`].

use std::io::{self, Read};

use tokio::io::{AsyncRead, AsyncReadExt};

use super::decoder::{Decoded, Decoder};
use super::message::{DEFAULT_MAX_CONTENT_LENGTH, Frame, Message, READ_CHUNK};

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
        match self.next_frame_streaming(usize::MAX, &mut |_: Vec<u8>| {})? {
            Some(Streamed::Frame(frame)) => Ok(Some(frame)),
            Some(Streamed::Pieces { .. }) => unreachable!("no message is usize::MAX bytes long"),
            None => Ok(None),
        }
    }

    /// The next frame, like [`next_frame`](Self::next_frame), except that a
    /// message of `stream_from` bytes or more (headers included) that does
    /// not arrive in one read is not gathered: its bytes go to `pieces` as
    /// they arrive, every byte exactly once and in order, each piece read
    /// straight into a buffer `pieces` lends (at most [`PIECE`] bytes). A
    /// proxy forwards a large message while the rest of it is still on its
    /// way, and whoever needs it whole assembles it, off the forwarding path.
    ///
    /// ```
    /// use std::io::Read as _;
    ///
    /// use ide_mcp_lsp::framing::{Streamed, SyncMessageReader};
    ///
    /// let (header, body) = (b"Content-Length: 300\r\n\r\n", [b' '; 300]);
    /// let wire = [header.as_slice(), &body].concat();
    /// // The header arrives first, then the body.
    /// let mut reader = SyncMessageReader::new(header.chain(body.as_slice()));
    /// let mut pieces = Vec::new();
    /// let streamed = reader
    ///     .next_frame_streaming(100, &mut |piece: Vec<u8>| pieces.extend(piece))?
    ///     .unwrap();
    /// let Streamed::Pieces { len, body_start, whole: true } = streamed else { panic!() };
    /// assert_eq!((len, body_start), (wire.len(), header.len()));
    /// assert_eq!(pieces, wire);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn next_frame_streaming(
        &mut self,
        stream_from: usize,
        pieces: &mut dyn Pieces,
    ) -> io::Result<Option<Streamed>> {
        loop {
            match self.decoder.decode_streaming(self.eof, stream_from) {
                Some(Decoded::Frame(frame)) => return Ok(Some(Streamed::Frame(frame))),
                Some(Decoded::Large {
                    first,
                    body_start,
                    total,
                }) => return self.read_pieces(first, body_start, total, pieces).map(Some),
                None => {}
            }
            if self.eof {
                return Ok(None);
            }
            if self.decoder.in_body() {
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

    /// Reads the rest of a large message into `pieces`, `first` (what was
    /// buffered) first.
    fn read_pieces(
        &mut self,
        first: Vec<u8>,
        body_start: usize,
        total: usize,
        pieces: &mut dyn Pieces,
    ) -> io::Result<Streamed> {
        pieces.begin(total, body_start);
        let mut len = first.len();
        if len > 0 {
            pieces.piece(first);
        }
        while len < total {
            let want = (total - len).min(PIECE);
            let mut buffer = pieces.buffer();
            buffer.clear();
            buffer.reserve_exact(want);
            let read = fill(&mut self.inner, &mut buffer, want)?;
            len += read;
            if read > 0 {
                pieces.piece(buffer);
            }
            if read < want {
                self.eof = true;
                return Ok(Streamed::Pieces {
                    len,
                    body_start,
                    whole: false,
                });
            }
        }
        Ok(Streamed::Pieces {
            len,
            body_start,
            whole: true,
        })
    }

    /// Reads more of the body in progress straight into the message's
    /// buffer, which has room for all of it.
    fn read_body(&mut self) -> io::Result<()> {
        let (target, want) = self.decoder.read_target();
        let want = want.min(PIECE);
        self.eof = fill(&mut self.inner, target, want)? < want;
        Ok(())
    }
}

/// Appends up to `want` bytes of `inner` to `target`, stopping early only
/// at the end of the stream; returns how many came. `read_to_end` fills a
/// vector's free space without zeroing it first, retries interrupted reads,
/// and a pipe hands over up to its whole content at once.
fn fill(inner: &mut impl Read, target: &mut Vec<u8>, want: usize) -> io::Result<usize> {
    inner.take(want as u64).read_to_end(target)
}

/// The most bytes of a body [`SyncMessageReader`] reads before handing
/// them on: the size of a piece of
/// [`next_frame_streaming`](SyncMessageReader::next_frame_streaming).
pub const PIECE: usize = 1024 * 1024;

/// Where [`SyncMessageReader::next_frame_streaming`] puts the bytes of a
/// large message as they arrive. A closure taking each piece is one.
pub trait Pieces {
    /// A message of `len` bytes (headers included) starts, its body at
    /// `body_start`; its pieces follow.
    fn begin(&mut self, len: usize, body_start: usize) {
        let _ = (len, body_start);
    }

    /// A buffer to read the next piece into: a spent one to reuse (whose
    /// memory is mapped already), or a new one. The reader clears it and
    /// makes room for up to [`PIECE`] bytes.
    fn buffer(&mut self) -> Vec<u8> {
        Vec::new()
    }

    /// The message's next bytes, never empty.
    fn piece(&mut self, piece: Vec<u8>);
}

impl<F: FnMut(Vec<u8>)> Pieces for F {
    fn piece(&mut self, piece: Vec<u8>) {
        self(piece);
    }
}

/// What [`SyncMessageReader::next_frame_streaming`] hands out.
#[derive(Debug, PartialEq, Eq)]
pub enum Streamed {
    /// A frame, whole; none of its bytes went to the pieces.
    Frame(Frame),
    /// A large message, all of whose bytes went to the pieces, in order.
    Pieces {
        /// How many bytes went, headers included.
        len: usize,
        /// Where the body starts in them.
        body_start: usize,
        /// Whether the message came whole: `false` when the stream ended
        /// inside it (its bytes then make no message, as
        /// [`Frame::Unframed`]).
        whole: bool,
    },
}

impl<R: Read> Iterator for SyncMessageReader<R> {
    type Item = io::Result<Frame>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_frame().transpose()
    }
}
