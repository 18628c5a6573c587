use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use proptest::prelude::*;
use tokio::io::{AsyncRead, ReadBuf};

use super::*;

/// An `AsyncRead` that hands out `data` in the given read sizes (cycled).
struct Chunked {
    data: Vec<u8>,
    pos: usize,
    sizes: Vec<usize>,
    turn: usize,
}

impl Chunked {
    fn new(data: Vec<u8>, sizes: Vec<usize>) -> Self {
        Self {
            data,
            pos: 0,
            sizes,
            turn: 0,
        }
    }
}

impl AsyncRead for Chunked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let size = self.sizes[self.turn % self.sizes.len()].max(1);
        self.turn += 1;
        let n = size.min(buf.remaining()).min(self.data.len() - self.pos);
        let pos = self.pos;
        buf.put_slice(&self.data[pos..pos + n]);
        self.pos += n;
        Poll::Ready(Ok(()))
    }
}

impl io::Read for Chunked {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let size = self.sizes[self.turn % self.sizes.len()].max(1);
        self.turn += 1;
        let n = size.min(buf.len()).min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

fn read_all(data: &[u8], sizes: Vec<usize>, limit: u64) -> Vec<Frame> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut reader =
        MessageReader::with_max_content_length(Chunked::new(data.to_vec(), sizes.clone()), limit);
    let frames = rt.block_on(async {
        let mut frames = vec![];
        while let Some(frame) = reader.next().await.unwrap() {
            frames.push(frame);
        }
        frames
    });
    let sync: Vec<Frame> = SyncMessageReader::with_max_content_length(
        Chunked::new(data.to_vec(), sizes.clone()),
        limit,
    )
    .collect::<io::Result<_>>()
    .unwrap();
    assert_eq!(frames, sync, "the two readers agree");
    assert_eq!(
        frames,
        read_streaming(data, sizes, limit),
        "streaming agrees"
    );
    frames
}

/// Reads with `next_frame_streaming`, streaming every message that can be;
/// checks that a streamed message's pieces make it, in order, that nothing
/// else went to the pieces, and rebuilds the frames the other readers hand
/// out.
fn read_streaming(data: &[u8], sizes: Vec<usize>, limit: u64) -> Vec<Frame> {
    let mut reader =
        SyncMessageReader::with_max_content_length(Chunked::new(data.to_vec(), sizes), limit);
    let mut frames = vec![];
    loop {
        let mut forwarded = Vec::new();
        let next = reader
            .next_frame_streaming(1, &mut |piece: Vec<u8>| {
                assert!(!piece.is_empty(), "no empty pieces");
                assert!(piece.len() <= PIECE);
                forwarded.extend_from_slice(&piece);
            })
            .unwrap();
        match next {
            None => {
                assert!(forwarded.is_empty());
                return frames;
            }
            Some(Streamed::Frame(frame)) => {
                assert!(forwarded.is_empty());
                frames.push(frame);
            }
            Some(Streamed::Pieces {
                len,
                body_start,
                whole,
            }) => {
                assert_eq!(len, forwarded.len());
                frames.push(if whole {
                    Frame::Message(Message::from_parts(forwarded, body_start))
                } else {
                    Frame::Unframed(forwarded)
                });
            }
        }
    }
}

/// Lends buffers from a pool that the pieces go back to, as the proxy does.
#[derive(Default)]
struct Pool {
    free: Vec<Vec<u8>>,
    lent: usize,
    received: Vec<u8>,
    addresses: std::collections::HashSet<usize>,
}

impl Pieces for Pool {
    fn buffer(&mut self) -> Vec<u8> {
        self.lent += 1;
        self.free.pop().unwrap_or_default()
    }
    fn piece(&mut self, piece: Vec<u8>) {
        self.received.extend_from_slice(&piece);
        self.addresses.insert(piece.as_ptr() as usize);
        self.free.push(piece);
    }
}

#[test]
fn a_large_message_goes_through_lent_buffers() {
    let body = vec![b'x'; 5 * PIECE + 17];
    let wire = [
        format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes(),
        &body,
        b"Content-Length: 2\r\n\r\n{}",
    ]
    .concat();
    // A pipe's reads: 64 KiB at most.
    let mut reader = SyncMessageReader::new(Chunked::new(wire.clone(), vec![64 * 1024]));
    let mut pool = Pool::default();
    let streamed = reader.next_frame_streaming(PIECE, &mut pool).unwrap();
    let header_len = wire.len() - body.len() - 23;
    assert_eq!(
        streamed,
        Some(Streamed::Pieces {
            len: header_len + body.len(),
            body_start: header_len,
            whole: true
        })
    );
    assert_eq!(pool.received, wire[..header_len + body.len()]);
    assert_eq!(pool.lent, 5, "the first piece was buffered already");
    assert!(
        pool.addresses.len() <= 2,
        "the first piece and one lent buffer, reused"
    );
    let Some(Streamed::Frame(Frame::Message(next))) =
        reader.next_frame_streaming(PIECE, &mut pool).unwrap()
    else {
        panic!("the next message")
    };
    assert_eq!(next.body(), b"{}");
}

fn bodies(frames: &[Frame]) -> Vec<&[u8]> {
    frames
        .iter()
        .filter_map(|f| match f {
            Frame::Message(m) => Some(m.body()),
            Frame::Unframed(_) => None,
        })
        .collect()
}

fn concat(frames: &[Frame]) -> Vec<u8> {
    frames.iter().flat_map(|f| f.as_bytes().to_vec()).collect()
}

#[test]
fn messages_are_handed_out_byte_for_byte() {
    let wire = b"Content-Length: 2\r\n\r\n{}content-length:3\nContent-Type: application/vscode-jsonrpc; charset=utf-8\n\n[1]";
    let frames = read_all(wire, vec![usize::MAX], DEFAULT_MAX_CONTENT_LENGTH);
    assert_eq!(bodies(&frames), [&b"{}"[..], b"[1]"]);
    assert_eq!(concat(&frames), wire);
    let Frame::Message(second) = &frames[1] else {
        panic!()
    };
    assert!(second.headers().ends_with(b"utf-8\n\n"));
}

#[test]
fn garbage_is_unframed_then_framing_resumes() {
    let wire = b"server log line\nContent-Length: 2\r\n\r\n{}Content-Length: x\r\n\r\n{}\r\nCONTENT-LENGTH: 1\r\n\r\n1";
    let frames = read_all(wire, vec![usize::MAX], DEFAULT_MAX_CONTENT_LENGTH);
    assert_eq!(
        frames,
        [
            Frame::Unframed(b"server log line\n".to_vec()),
            Frame::Message(Message::from_body(b"{}")),
            Frame::Unframed(b"Content-Length: x\r\n\r\n{}\r\n".to_vec()),
            Frame::Message(Message::from_parts(
                b"CONTENT-LENGTH: 1\r\n\r\n1".to_vec(),
                21
            )),
        ]
    );
}

#[test]
fn an_over_limit_body_passes_through_in_chunks() {
    let body = vec![b'x'; 3 * READ_CHUNK + 5];
    let mut wire = Message::from_body(&body).into_bytes();
    wire.extend_from_slice(&Message::from_body(b"{}").into_bytes());
    let frames = read_all(&wire, vec![usize::MAX], 1000);
    assert_eq!(concat(&frames), wire);
    assert!(
        frames[..frames.len() - 1]
            .iter()
            .all(|f| matches!(f, Frame::Unframed(b) if b.len() <= READ_CHUNK))
    );
    assert_eq!(bodies(&frames), [&b"{}"[..]]);
}

#[test]
fn a_stream_ending_inside_a_message_unframes_it() {
    let wire = b"Content-Length: 10\r\n\r\n{\"a\"";
    let frames = read_all(wire, vec![3], DEFAULT_MAX_CONTENT_LENGTH);
    assert_eq!(frames, [Frame::Unframed(wire.to_vec())]);
    let frames = read_all(b"Content-Len", vec![4], DEFAULT_MAX_CONTENT_LENGTH);
    assert_eq!(frames, [Frame::Unframed(b"Content-Len".to_vec())]);
}

#[test]
fn a_large_message_is_read_into_its_own_buffer() {
    let body = vec![b'a'; 5 * READ_CHUNK];
    let wire = Message::from_body(&body);
    let frames = read_all(
        wire.as_bytes(),
        vec![usize::MAX],
        DEFAULT_MAX_CONTENT_LENGTH,
    );
    assert_eq!(frames, [Frame::Message(wire)]);
}

#[tokio::test]
async fn recycled_buffers_serve_the_next_large_message() {
    let first = Message::from_body(vec![b'a'; 3 * READ_CHUNK]);
    let second = Message::from_body(vec![b'b'; 2 * READ_CHUNK]);
    let third = Message::from_body(vec![b'c'; 4 * READ_CHUNK]);
    let wire = [first.as_bytes(), second.as_bytes(), third.as_bytes()].concat();
    let mut reader = MessageReader::new(Chunked::new(wire, vec![READ_CHUNK]));
    let Some(Frame::Message(got)) = reader.next().await.unwrap() else {
        panic!()
    };
    assert_eq!(got, first);
    let address = got.as_bytes().as_ptr();
    reader.recycle(got);
    let Some(Frame::Message(got)) = reader.next().await.unwrap() else {
        panic!()
    };
    assert_eq!(
        got, second,
        "a reused buffer holds exactly the next message"
    );
    assert_eq!(got.as_bytes().as_ptr(), address, "the same buffer");
    reader.recycle(got);
    let Some(Frame::Message(got)) = reader.next().await.unwrap() else {
        panic!()
    };
    assert_eq!(got, third, "too small a spare is not used");
}

#[test]
fn messages_built_from_bodies() {
    let m = Message::from_body(br#"{"jsonrpc":"2.0"}"#);
    assert_eq!(
        m.as_bytes(),
        b"Content-Length: 17\r\n\r\n{\"jsonrpc\":\"2.0\"}"
    );
    assert_eq!(m.headers(), b"Content-Length: 17\r\n\r\n");
    assert!(format!("{m:?}").contains("body_len: 17"));
}

/// One piece of a generated stream: a message in some header style, or garbage.
#[derive(Clone, Debug)]
enum Piece {
    Message {
        body: Vec<u8>,
        lower: bool,
        crlf: bool,
        content_type: bool,
    },
    Garbage(Vec<u8>),
}

fn piece() -> impl Strategy<Value = Piece> {
    let body = proptest::collection::vec(any::<u8>(), 0..300);
    prop_oneof![
        4 => (body, any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(body, lower, crlf, content_type)| Piece::Message { body, lower, crlf, content_type }),
        // Garbage never contains the resynchronization needle's first letter,
        // so where framing resumes is predictable.
        1 => proptest::collection::vec(any::<u8>().prop_filter("no c", |b| !b"cC".contains(b)), 1..40).prop_map(Piece::Garbage),
    ]
}

fn encode(piece: &Piece) -> Vec<u8> {
    match piece {
        Piece::Message {
            body,
            lower,
            crlf,
            content_type,
        } => {
            let eol = if *crlf { "\r\n" } else { "\n" };
            let name = if *lower {
                "content-length"
            } else {
                "Content-Length"
            };
            let mut out = String::new();
            if *content_type {
                out.push_str("Content-Type: application/vscode-jsonrpc; charset=utf-8");
                out.push_str(eol);
            }
            out.push_str(name);
            out.push_str(": ");
            out.push_str(&body.len().to_string());
            out.push_str(eol);
            out.push_str(eol);
            let mut bytes = out.into_bytes();
            bytes.extend_from_slice(body);
            bytes
        }
        Piece::Garbage(bytes) => bytes.clone(),
    }
}

proptest! {
    #[test]
    fn any_split_hands_out_every_byte_and_every_message(
        pieces in proptest::collection::vec(piece(), 0..12),
        sizes in proptest::collection::vec(1usize..200, 1..8),
    ) {
        let wire: Vec<u8> = pieces.iter().flat_map(encode).collect();
        let frames = read_all(&wire, sizes, DEFAULT_MAX_CONTENT_LENGTH);
        prop_assert_eq!(concat(&frames), wire);
        // Garbage holds no `c`, so it can neither hide nor invent a
        // `Content-Length`: every message is found, and nothing else.
        let expected: Vec<&[u8]> = pieces.iter().filter_map(|p| match p {
            Piece::Message { body, .. } => Some(&body[..]),
            Piece::Garbage(_) => None,
        }).collect();
        prop_assert_eq!(bodies(&frames), expected);
    }

    #[test]
    fn arbitrary_bytes_never_lose_a_byte(
        wire in proptest::collection::vec(any::<u8>(), 0..600),
        sizes in proptest::collection::vec(1usize..64, 1..4),
        limit in 0u64..100,
    ) {
        let frames = read_all(&wire, sizes, limit);
        prop_assert_eq!(concat(&frames), wire);
    }
}
