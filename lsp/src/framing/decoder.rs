//! The framing state machine, free of I/O: the readers append bytes where
//! [`Decoder::read_target`] says and ask [`Decoder::decode`] for frames.

use super::message::{Frame, MAX_HEADER_BYTES, Message, READ_CHUNK};

/// What resynchronization looks for, lower-cased.
const NEEDLE: &[u8] = b"content-length:";

#[derive(Debug)]
enum State {
    /// Between messages: the next bytes are a header section.
    Headers,
    /// Inside a message larger than what was buffered at its header: the rest
    /// of its body is read straight into `message`, up to `total` bytes.
    Body {
        message: Vec<u8>,
        body_start: usize,
        total: usize,
    },
    /// Inside an over-limit body: `remaining` bytes go out unframed.
    Passthrough { remaining: u64 },
}

/// Cuts a byte stream into frames.
#[derive(Debug)]
pub(crate) struct Decoder {
    /// Bytes read and not yet handed out start at `pos`.
    buf: Vec<u8>,
    pos: usize,
    state: State,
    max_content_length: u64,
    /// A large message's buffer handed back with [`recycle`](Self::recycle),
    /// reused for the next large message.
    spare: Option<Vec<u8>>,
}

/// What [`Decoder::decode_streaming`] hands out.
#[derive(Debug)]
pub(crate) enum Decoded {
    /// A frame.
    Frame(Frame),
    /// The start of a message of `total` bytes (headers included, the body
    /// starting at `body_start`) of the size asked to be streamed and not
    /// all buffered: `first` is every byte of it buffered so far. The rest,
    /// `total - first.len()` bytes, is the caller's to read from the stream
    /// (the decoder's buffer is empty); the decoder expects a header section
    /// next.
    Large {
        first: Vec<u8>,
        body_start: usize,
        total: usize,
    },
}

/// What a header section at the start of some bytes is.
#[derive(Debug, PartialEq, Eq)]
enum Headers {
    /// Not all there yet.
    Incomplete,
    /// A message's headers, `len` bytes long, announcing `content_length`.
    Complete { len: usize, content_length: u64 },
    /// Not a header section.
    Garbage,
}

impl Decoder {
    pub(crate) fn new(max_content_length: u64) -> Self {
        Self {
            buf: Vec::new(),
            pos: 0,
            state: State::Headers,
            max_content_length,
            spare: None,
        }
    }

    /// Keeps `buffer` (a message's, once written out) for the next message
    /// too large for the read buffer: its pages are already mapped, so the
    /// next large message is not slowed by page faults. Buffers smaller than
    /// [`READ_CHUNK`] are not worth keeping; the largest one is kept.
    pub(crate) fn recycle(&mut self, buffer: Vec<u8>) {
        if buffer.capacity() >= READ_CHUNK
            && self
                .spare
                .as_ref()
                .is_none_or(|spare| spare.capacity() < buffer.capacity())
        {
            self.spare = Some(buffer);
        }
    }

    /// A buffer for a message of `total` bytes: the spare one if it is
    /// large enough.
    fn message_buffer(&mut self, total: usize) -> Vec<u8> {
        match self.spare.take() {
            Some(mut spare) if spare.capacity() >= total => {
                spare.clear();
                spare
            }
            spare => {
                self.spare = spare;
                Vec::with_capacity(total)
            }
        }
    }

    /// Where the next read appends, and at most how many bytes it may add.
    pub(crate) fn read_target(&mut self) -> (&mut Vec<u8>, usize) {
        let want = match self.state {
            State::Body {
                ref message, total, ..
            } => total - message.len(),
            State::Passthrough { remaining } => {
                usize::try_from(remaining).map_or(READ_CHUNK, |r| r.clamp(1, READ_CHUNK))
            }
            State::Headers => READ_CHUNK,
        };
        if let State::Body { message, .. } = &mut self.state {
            return (message, want);
        }
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.reserve(want);
        (&mut self.buf, want)
    }

    /// Whether a message is being read into its own buffer (see
    /// [`read_target`](Self::read_target)).
    pub(crate) fn in_body(&self) -> bool {
        matches!(self.state, State::Body { .. })
    }

    /// The next frame the buffered bytes make; `None` when more bytes are
    /// needed (or, at `eof`, when everything has been handed out).
    pub(crate) fn decode(&mut self, eof: bool) -> Option<Frame> {
        match self.decode_streaming(eof, usize::MAX)? {
            Decoded::Frame(frame) => Some(frame),
            Decoded::Large { .. } => unreachable!("no message is usize::MAX bytes long"),
        }
    }

    /// Like [`decode`](Self::decode), except that a message of `stream_from`
    /// bytes or more (headers included) that is not all buffered when its
    /// header section is read is handed out as [`Decoded::Large`] rather
    /// than gathered: the caller reads its body straight from the stream.
    pub(crate) fn decode_streaming(&mut self, eof: bool, stream_from: usize) -> Option<Decoded> {
        loop {
            match &mut self.state {
                State::Headers => return self.decode_headers(eof, stream_from),
                State::Body {
                    message,
                    body_start,
                    total,
                } => {
                    if message.len() == *total {
                        let message = Message::from_parts(std::mem::take(message), *body_start);
                        self.state = State::Headers;
                        return Some(Decoded::Frame(Frame::Message(message)));
                    }
                    if !eof {
                        return None;
                    }
                    let partial = std::mem::take(message);
                    self.state = State::Headers;
                    return Some(Decoded::Frame(Frame::Unframed(partial)));
                }
                State::Passthrough { remaining } => {
                    let available = self.buf.len() - self.pos;
                    if *remaining == 0 || (available == 0 && eof) {
                        self.state = State::Headers;
                        continue;
                    }
                    if available == 0 {
                        return None;
                    }
                    let n = usize::try_from(*remaining).map_or(available, |r| r.min(available));
                    *remaining -= n as u64;
                    return Some(Decoded::Frame(Frame::Unframed(self.take(n))));
                }
            }
        }
    }

    fn decode_headers(&mut self, eof: bool, stream_from: usize) -> Option<Decoded> {
        let available = self.buf.len() - self.pos;
        if available == 0 {
            return None;
        }
        let frame = match parse_headers(&self.buf[self.pos..]) {
            Headers::Incomplete if eof => Frame::Unframed(self.take(available)),
            Headers::Incomplete => return None,
            Headers::Complete {
                len,
                content_length,
            } if content_length > self.max_content_length => {
                self.state = State::Passthrough {
                    remaining: content_length,
                };
                Frame::Unframed(self.take(len))
            }
            Headers::Complete {
                len,
                content_length,
            } => {
                // Within the limit, which is far below `usize::MAX` in practice;
                // a limit above what memory can hold fails like any allocation.
                let total = len + usize::try_from(content_length).unwrap_or(usize::MAX - len);
                if available >= total {
                    let bytes = self.take(total);
                    return Some(Decoded::Frame(Frame::Message(Message::from_parts(
                        bytes, len,
                    ))));
                }
                if total >= stream_from {
                    return Some(Decoded::Large {
                        first: self.take(available),
                        body_start: len,
                        total,
                    });
                }
                let mut message = self.message_buffer(total);
                message.extend_from_slice(&self.buf[self.pos..]);
                self.pos = self.buf.len();
                self.state = State::Body {
                    message,
                    body_start: len,
                    total,
                };
                return self.decode_streaming(eof, stream_from);
            }
            Headers::Garbage => {
                let end = match find_needle(&self.buf[self.pos + 1..]) {
                    Some(at) => at + 1,
                    None if eof => available,
                    // Keep what may be the start of a `Content-Length:`.
                    None => available.saturating_sub(NEEDLE.len() - 1),
                };
                if end == 0 {
                    return None;
                }
                Frame::Unframed(self.take(end))
            }
        };
        Some(Decoded::Frame(frame))
    }

    /// The next `n` buffered bytes, handed out.
    fn take(&mut self, n: usize) -> Vec<u8> {
        let bytes = self.buf[self.pos..self.pos + n].to_vec();
        self.pos += n;
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
        bytes
    }
}

/// Reads the header section at the start of `bytes`.
fn parse_headers(bytes: &[u8]) -> Headers {
    let mut content_length = None;
    let mut start = 0;
    loop {
        let Some(newline) = memchr::memchr(b'\n', &bytes[start..]) else {
            let partial = &bytes[start..];
            return if bytes.len() > MAX_HEADER_BYTES || !could_start_header_line(partial) {
                Headers::Garbage
            } else {
                Headers::Incomplete
            };
        };
        let next = start + newline + 1;
        if next > MAX_HEADER_BYTES {
            return Headers::Garbage;
        }
        let line = &bytes[start..start + newline];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            return match content_length {
                Some(content_length) if start > 0 => Headers::Complete {
                    len: next,
                    content_length,
                },
                _ => Headers::Garbage,
            };
        }
        let Some((name, value)) = split_header(line) else {
            return Headers::Garbage;
        };
        if name.eq_ignore_ascii_case(b"content-length") {
            match (parse_length(value), content_length) {
                (Some(n), None) => content_length = Some(n),
                (Some(n), Some(m)) if n == m => {}
                _ => return Headers::Garbage,
            }
        }
        start = next;
    }
}

/// `Name: value` → (`Name`, `value` without surrounding blanks).
fn split_header(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let colon = memchr::memchr(b':', line)?;
    let (name, value) = (&line[..colon], &line[colon + 1..]);
    if name.is_empty() || !name.iter().all(|&b| is_token(b)) {
        return None;
    }
    Some((name, value.trim_ascii()))
}

/// Whether an unfinished line can still become a header line (so that a
/// stream of garbage without a newline is recognised before the limit).
fn could_start_header_line(partial: &[u8]) -> bool {
    match memchr::memchr(b':', partial) {
        Some(colon) => colon > 0 && partial[..colon].iter().all(|&b| is_token(b)),
        None => partial
            .iter()
            .all(|&b| is_token(b) || b == b'\r' && partial.len() == 1),
    }
}

/// RFC 9110's `tchar`: what a header name is made of.
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A decimal `Content-Length`: digits only, no sign, no overflow.
fn parse_length(value: &[u8]) -> Option<u64> {
    if value.is_empty() || value.len() > 19 || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(value).ok()?.parse().ok()
}

/// Where `Content-Length:` (any case) first starts in `bytes`.
fn find_needle(bytes: &[u8]) -> Option<usize> {
    // Candidates start with `c`/`C`; memchr2 finds them at memory speed.
    let mut from = 0;
    while let Some(at) = memchr::memchr2(b'c', b'C', &bytes[from..]) {
        let at = from + at;
        let candidate = &bytes[at..];
        if candidate.len() >= NEEDLE.len() && candidate[..NEEDLE.len()].eq_ignore_ascii_case(NEEDLE)
        {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_sections() {
        let complete = |len, content_length| Headers::Complete {
            len,
            content_length,
        };
        assert_eq!(
            parse_headers(b"Content-Length: 2\r\n\r\n{}"),
            complete(21, 2)
        );
        assert_eq!(parse_headers(b"content-length:2\n\n"), complete(18, 2));
        let two = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nCONTENT-LENGTH:\t7 \r\n\r\n";
        assert_eq!(parse_headers(two), complete(two.len(), 7));
        assert_eq!(parse_headers(b"Content-Len"), Headers::Incomplete);
        assert_eq!(
            parse_headers(b"Content-Length: 2\r\n\r"),
            Headers::Incomplete
        );
        for garbage in [
            &b"hello world\n"[..],
            b"{\"jsonrpc\"",
            b"Content-Type: x\r\n\r\n",
            b"\r\n",
            b"Content-Length: -1\r\n\r\n",
            b"Content-Length: 1e3\r\n\r\n",
            b"Content-Length: 99999999999999999999\r\n\r\n",
            b"Content-Length: 1\r\nContent-Length: 2\r\n\r\n",
            b"Bad Name: 1\r\n\r\n",
        ] {
            assert_eq!(
                parse_headers(garbage),
                Headers::Garbage,
                "{:?}",
                String::from_utf8_lossy(garbage)
            );
        }
        let long = format!("X-Long: {}\r\n", "a".repeat(MAX_HEADER_BYTES));
        assert_eq!(parse_headers(long.as_bytes()), Headers::Garbage);
        assert_eq!(
            parse_headers(&long.as_bytes()[..=MAX_HEADER_BYTES]),
            Headers::Garbage
        );
    }

    #[test]
    fn the_needle_is_found_in_any_case() {
        assert_eq!(find_needle(b"xx cONTENT-length: 1"), Some(3));
        assert_eq!(find_needle(b"content-length"), None);
        assert_eq!(find_needle(b"ccontent-length:"), Some(1));
    }
}
