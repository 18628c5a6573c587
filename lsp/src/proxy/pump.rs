//! The two forwarding loops, each on its own thread with blocking I/O (the
//! shortest path for a message): editor → server and server → editor.
//!
//! Each frame's bytes are forwarded exactly as read, unframed bytes
//! included; the observer sees each message's body first and may keep an
//! editor message for itself (answering it) or replace a server message
//! (the one code action response it extends). Observation runs inline:
//! BENCHMARKS.md ("LSP proxy") compares it with forwarding alone.

use std::io::Read;
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;

use super::shared::Shared;
use super::sink::{Sink, Streaming};
use crate::framing::{Frame, Message, PIECE, Pieces, Streamed, SyncMessageReader};
use crate::observer::{ClientVerdict, Interest, ServerVerdict};

/// What watches the traffic. Implementations must be quick: they run on the
/// forwarding path.
pub trait Watch: Send + Sync {
    /// A message body from the editor, before it is forwarded.
    fn editor_message(&self, body: &[u8]) -> ClientVerdict;
    /// A message body from the server, before it is forwarded.
    fn server_message(&self, body: &[u8]) -> ServerVerdict;

    /// Whether this watch takes the pieces of an editor message forwarded
    /// as it arrived (one of `STREAM_FROM` bytes or more) through
    /// [`forwarded_editor_piece`](Self::forwarded_editor_piece), to put it
    /// together off the forwarding path. Otherwise (the default) the pump
    /// puts it together and hands it to
    /// [`forwarded_editor_message`](Self::forwarded_editor_message).
    fn takes_pieces(&self) -> bool {
        false
    }

    /// The next piece of an editor message forwarded as it arrived (when
    /// [`takes_pieces`](Self::takes_pieces)). Returns a spent piece buffer
    /// for the reader to reuse, if one is free.
    fn forwarded_editor_piece(&self, piece: Piece) -> Option<Vec<u8>> {
        match piece {
            Piece::Bytes(bytes) => Some(bytes),
            Piece::Begin { .. } | Piece::End { .. } => None,
        }
    }

    /// An editor message that was forwarded while it arrived, put together
    /// by the pump (when the watch does not take pieces): observed only,
    /// its verdict moot. Returns the message, for its buffer to be reused.
    fn forwarded_editor_message(&self, message: Message) -> Option<Message> {
        self.editor_message(message.body());
        Some(message)
    }

    /// An editor message observed off the forwarding path (its verdict
    /// moot), its buffer shared with whatever keeps it (the link to the
    /// host). By default observed as any other.
    fn queued_editor_message(&self, message: &Shared) {
        drop(self.editor_message(message.body()));
    }

    /// A server message observed off the forwarding path: see
    /// [`queued_editor_message`](Self::queued_editor_message).
    fn queued_server_message(&self, message: &Shared) {
        drop(self.server_message(message.body()));
    }

    /// Which messages need a verdict (see [`Interest`]); `None` (the
    /// default): only the few that always do.
    fn interest(&self) -> Option<Arc<Interest>> {
        None
    }

    /// Returns once every message handed over so far has been observed
    /// (a watch that observes later, on a thread of its own, waits for it).
    fn settle(&self) {}
}

/// A piece of an editor message forwarded as it arrived: see
/// [`Watch::forwarded_editor_piece`].
#[derive(Debug)]
pub enum Piece {
    /// A message starts: `len` bytes, headers included, its body starting
    /// at `body_start`.
    Begin {
        /// The message's length, headers included.
        len: usize,
        /// Where its body starts.
        body_start: usize,
    },
    /// Its next bytes, in order (the first piece starts with its headers).
    Bytes(Vec<u8>),
    /// It is over: `whole`, or cut short by the end of the stream (then
    /// its bytes are no message).
    End {
        /// Whether every byte came.
        whole: bool,
    },
}

/// A message put back together from its [`Piece`]s; its buffer is kept
/// for the next one.
#[derive(Debug, Default)]
pub(crate) struct Assembly {
    bytes: Vec<u8>,
    body_start: usize,
    /// The last message, shared ([`lend`](Self::lend)), until its buffer
    /// can serve again.
    lent: Option<Shared>,
}

impl Assembly {
    /// Takes `piece`; gives back its buffer, spent, and at the end of a
    /// whole message, the message (hand it back with
    /// [`reuse`](Self::reuse) once read).
    pub(crate) fn add(&mut self, piece: Piece) -> (Option<Vec<u8>>, Option<Message>) {
        match piece {
            Piece::Begin { len, body_start } => {
                self.take_back();
                self.bytes.clear();
                self.bytes.reserve_exact(len);
                self.body_start = body_start;
                (None, None)
            }
            Piece::Bytes(bytes) => {
                self.bytes.extend_from_slice(&bytes);
                (Some(bytes), None)
            }
            Piece::End { whole: true } => {
                let bytes = std::mem::take(&mut self.bytes);
                (None, Some(Message::from_parts(bytes, self.body_start)))
            }
            Piece::End { whole: false } => {
                self.bytes.clear();
                (None, None)
            }
        }
    }

    /// Keeps a message's buffer (from [`add`](Self::add)) for the next one.
    pub(crate) fn reuse(&mut self, message: Message) {
        let mut bytes = message.into_bytes();
        if bytes.capacity() > self.bytes.capacity() {
            bytes.clear();
            self.bytes = bytes;
        }
    }

    /// Keeps a message (from [`add`](Self::add)) shared with others: its
    /// buffer serves the next message if they have let go of it by then.
    pub(crate) fn lend(&mut self, message: Shared) {
        self.take_back();
        self.lent = Some(message);
    }

    /// The lent message's buffer back, if no one else holds it; otherwise
    /// it is theirs to free.
    fn take_back(&mut self) {
        if let Some(Ok(message)) = self.lent.take().map(Shared::reclaim) {
            self.reuse(message);
        }
    }
}

/// Spent piece buffers, lent again to the reader: their memory stays
/// mapped, so a large message is forwarded through a few MiB of warm
/// memory instead of fresh pages.
#[derive(Debug, Default)]
pub(crate) struct Spare(Vec<Vec<u8>>);

impl Spare {
    /// How many buffers are kept (of [`PIECE`] bytes each).
    const KEPT: usize = 16;

    /// A buffer for the next piece.
    pub(crate) fn lend(&mut self) -> Vec<u8> {
        self.take().unwrap_or_default()
    }

    /// A kept buffer, if any.
    pub(crate) fn take(&mut self) -> Option<Vec<u8>> {
        self.0.pop()
    }

    /// Keeps `buffer` if it is a whole piece's and there is room.
    pub(crate) fn keep(&mut self, mut buffer: Vec<u8>) {
        if buffer.capacity() >= PIECE && self.0.len() < Self::KEPT {
            buffer.clear();
            self.0.push(buffer);
        }
    }
}

/// Forwards everything, watches nothing: the baseline of the benchmarks.
#[derive(Debug, Default)]
pub struct Blind;

impl Watch for Blind {
    fn editor_message(&self, _: &[u8]) -> ClientVerdict {
        ClientVerdict::Forward
    }
    fn server_message(&self, _: &[u8]) -> ServerVerdict {
        ServerVerdict::Forward
    }
    fn takes_pieces(&self) -> bool {
        true
    }
}

/// What the pumps tell the process loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PumpEvent {
    /// The editor sent `exit` (forwarded to the server).
    ExitSent,
    /// The editor's stream ended (or failed).
    EditorEnded,
    /// The server's output ended (or failed).
    ServerEnded,
}

/// From this size on (headers included), an editor message is forwarded
/// piece by piece as it arrives, then observed: the server reads a large
/// `didOpen` while the editor is still writing it, and the forwarding
/// thread reads it through a few reused buffers of [`PIECE`] bytes. The messages the proxy
/// keeps from the server (our code action's command, the editor's answers
/// to the proxy's own requests) are a few hundred bytes.
pub(crate) const STREAM_FROM: usize = 1024 * 1024;

/// Editor → server, until the editor's stream ends. Closes the server's
/// input at the end so that the server sees the end too.
pub(crate) fn editor_to_server(
    input: impl Read,
    server: &Sink,
    editor: &Sink,
    watch: &dyn Watch,
    events: &UnboundedSender<PumpEvent>,
) {
    let mut reader = SyncMessageReader::new(input);
    let (mut spare, mut assembly) = (Spare::default(), Assembly::default());
    let takes_pieces = watch.takes_pieces();
    loop {
        let mut forwarding = Forwarding {
            server,
            out: None,
            watch,
            spare: &mut spare,
            assembly: (!takes_pieces).then_some(&mut assembly),
        };
        let next = reader.next_frame_streaming(STREAM_FROM, &mut forwarding);
        // The server's sink is free for other messages.
        forwarding.out = None;
        match next {
            Ok(Some(Streamed::Pieces { whole, .. })) => forwarding.observe(Piece::End { whole }),
            Ok(Some(Streamed::Frame(Frame::Message(message)))) => {
                let body = message.body();
                if !Interest::may_need_verdict(body) {
                    // A large notification (a `didOpen` of a big file):
                    // the server gets it before the observer reads it.
                    server.send(message.as_bytes());
                    drop(watch.editor_message(body));
                    // Its buffer serves the next large message.
                    reader.recycle(message);
                    continue;
                }
                match watch.editor_message(body) {
                    ClientVerdict::Forward => {
                        server.send(message.as_bytes());
                    }
                    ClientVerdict::Answer(body) => {
                        editor.send(Message::from_body(body).as_bytes());
                    }
                    ClientVerdict::Replace(body) => {
                        server.send(Message::from_body(body).as_bytes());
                    }
                    ClientVerdict::AnswerAll(bodies) => {
                        for body in bodies {
                            editor.send(Message::from_body(body).as_bytes());
                        }
                    }
                    ClientVerdict::Drop => {}
                }
                if is_exit(body) {
                    let _ = events.send(PumpEvent::ExitSent);
                }
                reader.recycle(message);
            }
            Ok(Some(Streamed::Frame(Frame::Unframed(bytes)))) => {
                tracing::debug!(
                    bytes = bytes.len(),
                    "unframed bytes from the editor, forwarded"
                );
                server.send(&bytes);
            }
            Ok(None) => break,
            Err(error) => {
                tracing::info!(%error, "cannot read from the editor");
                break;
            }
        }
    }
    server.close();
    let _ = events.send(PumpEvent::EditorEnded);
}

/// An editor message of [`STREAM_FROM`] bytes or more on its way: each
/// piece is written to the server (the sink held from the first piece to
/// the last, so that no other message comes between them), then handed to
/// the watch, or put together for it here.
struct Forwarding<'a> {
    server: &'a Sink,
    out: Option<Streaming<'a>>,
    watch: &'a dyn Watch,
    spare: &'a mut Spare,
    /// Where the message is put together when the watch does not take
    /// pieces.
    assembly: Option<&'a mut Assembly>,
}

impl Forwarding<'_> {
    /// Hands `piece` to the watch, or to the assembly and the message it
    /// completes to the watch; keeps the spent buffer that comes back.
    fn observe(&mut self, piece: Piece) {
        let spent = match &mut self.assembly {
            Some(assembly) => {
                let (spent, whole) = assembly.add(piece);
                if let Some(message) = whole
                    && let Some(message) = self.watch.forwarded_editor_message(message)
                {
                    assembly.reuse(message);
                }
                spent
            }
            None => self.watch.forwarded_editor_piece(piece),
        };
        if let Some(buffer) = spent {
            self.spare.keep(buffer);
        }
    }
}

impl Pieces for Forwarding<'_> {
    fn begin(&mut self, len: usize, body_start: usize) {
        self.observe(Piece::Begin { len, body_start });
    }

    fn buffer(&mut self) -> Vec<u8> {
        self.spare.lend()
    }

    fn piece(&mut self, piece: Vec<u8>) {
        self.out
            .get_or_insert_with(|| self.server.stream())
            .write(&piece);
        self.observe(Piece::Bytes(piece));
    }
}

/// Server → editor, until the server's output ends.
pub(crate) fn server_to_editor(
    output: impl Read,
    editor: &Sink,
    watch: &dyn Watch,
    events: &UnboundedSender<PumpEvent>,
) {
    let mut reader = SyncMessageReader::new(output);
    loop {
        match reader.next_frame() {
            Ok(Some(Frame::Message(message))) => {
                match watch.server_message(message.body()) {
                    ServerVerdict::Forward => editor.send(message.as_bytes()),
                    ServerVerdict::Replace(body) => {
                        editor.send(Message::from_body(body).as_bytes())
                    }
                    ServerVerdict::Drop => true,
                };
                reader.recycle(message);
            }
            Ok(Some(Frame::Unframed(bytes))) => {
                tracing::debug!(
                    bytes = bytes.len(),
                    "unframed bytes from the server, forwarded"
                );
                editor.send(&bytes);
            }
            Ok(None) => break,
            Err(error) => {
                tracing::info!(%error, "cannot read from the server");
                break;
            }
        }
    }
    let _ = events.send(PumpEvent::ServerEnded);
}

/// Whether `body` is the `exit` notification (checked only on short bodies).
pub(crate) fn is_exit(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Method<'a> {
        #[serde(borrow)]
        method: Option<&'a str>,
        id: Option<serde::de::IgnoredAny>,
    }
    body.len() < 256
        && memchr::memmem::find(body, b"\"exit\"").is_some()
        && serde_json::from_slice::<Method<'_>>(body)
            .is_ok_and(|message| message.method == Some("exit") && message.id.is_none())
}

#[cfg(test)]
mod tests {
    use std::io::{self, Read as _};

    use super::*;

    /// Answers `workspace/executeCommand` itself.
    struct Answering;

    impl Watch for Answering {
        fn editor_message(&self, body: &[u8]) -> ClientVerdict {
            if body.starts_with(b"{\"cmd") {
                ClientVerdict::Answer(b"answer".to_vec())
            } else {
                ClientVerdict::Forward
            }
        }
        fn server_message(&self, _: &[u8]) -> ServerVerdict {
            ServerVerdict::Replace(b"replaced".to_vec())
        }
    }

    /// Records the editor bodies it observes; with `pieces`, it takes large
    /// messages in pieces and puts them together itself.
    #[derive(Default)]
    struct Seen {
        pieces: bool,
        bodies: std::sync::Mutex<Vec<Vec<u8>>>,
        assembly: std::sync::Mutex<Assembly>,
    }

    impl Watch for Seen {
        fn editor_message(&self, body: &[u8]) -> ClientVerdict {
            self.bodies.lock().unwrap().push(body.to_vec());
            ClientVerdict::Forward
        }
        fn server_message(&self, _: &[u8]) -> ServerVerdict {
            ServerVerdict::Forward
        }
        fn takes_pieces(&self) -> bool {
            self.pieces
        }
        fn forwarded_editor_piece(&self, piece: Piece) -> Option<Vec<u8>> {
            if let Piece::Bytes(bytes) = &piece {
                assert!(!bytes.is_empty() && bytes.len() <= PIECE);
            }
            let (spent, message) = self.assembly.lock().unwrap().add(piece);
            if let Some(message) = message {
                self.editor_message(message.body());
            }
            spent
        }
    }

    #[test]
    fn a_large_message_is_forwarded_in_pieces_and_observed_whole() {
        let text = "x".repeat(3 * PIECE);
        let body = format!(r#"{{"method":"textDocument/didOpen","text":"{text}"}}"#);
        let large = Message::from_body(&body);
        let input = [large.as_bytes(), SESSION].concat();
        for pieces in [false, true] {
            let seen = Seen {
                pieces,
                ..Seen::default()
            };
            let (to_server, _, events) = run_editor_side(&input, &seen);
            assert!(to_server == input, "byte for byte");
            assert_eq!(events, [PumpEvent::ExitSent, PumpEvent::EditorEnded]);
            let bodies = seen.bodies.into_inner().unwrap();
            assert_eq!(bodies.len(), 4, "the large one and the three of SESSION");
            assert!(bodies[0] == body.as_bytes(), "observed whole");
        }
    }

    /// A message lent to the host link: its buffer serves the next one
    /// once the link has let go of it.
    #[test]
    fn a_lent_message_buffer_serves_again() {
        let whole = |assembly: &mut Assembly| {
            assembly.add(Piece::Begin {
                len: 8,
                body_start: 0,
            });
            assembly.add(Piece::Bytes(b"12345678".to_vec()));
            assembly.add(Piece::End { whole: true }).1.unwrap()
        };
        let mut assembly = Assembly::default();
        let first = Shared::new(whole(&mut assembly));
        let at = first.body().as_ptr();
        let link = first.clone();
        assembly.lend(first);
        drop(link);
        let second = whole(&mut assembly);
        assert_eq!(second.body(), b"12345678");
        assert_eq!(second.as_bytes().as_ptr(), at, "the same buffer");
    }

    #[test]
    fn a_large_message_cut_short_is_forwarded_but_not_observed() {
        let body = format!(
            r#"{{"method":"textDocument/didOpen","text":"{}"}}"#,
            "x".repeat(2 * PIECE)
        );
        let large = Message::from_body(&body);
        let cut = &large.as_bytes()[..large.as_bytes().len() - 10];
        for pieces in [false, true] {
            let seen = Seen {
                pieces,
                ..Seen::default()
            };
            let (to_server, _, events) = run_editor_side(cut, &seen);
            assert!(to_server == cut, "byte for byte");
            assert_eq!(events, [PumpEvent::EditorEnded]);
            assert!(seen.bodies.into_inner().unwrap().is_empty());
        }
    }

    fn run_editor_side(input: &[u8], watch: &dyn Watch) -> (Vec<u8>, Vec<u8>, Vec<PumpEvent>) {
        let (server_read, server_write) = io::pipe().unwrap();
        let (editor_read, editor_write) = io::pipe().unwrap();
        let server = Sink::new("server", server_write);
        let editor = Sink::new("editor", editor_write);
        let (events, mut received) = tokio::sync::mpsc::unbounded_channel();
        let collect = |mut pipe: io::PipeReader| {
            std::thread::spawn(move || {
                let mut all = Vec::new();
                pipe.read_to_end(&mut all).unwrap();
                all
            })
        };
        let (to_server, to_editor) = (collect(server_read), collect(editor_read));
        editor_to_server(input, &server, &editor, watch, &events);
        editor.close();
        drop((server, editor));
        let mut seen = Vec::new();
        while let Ok(event) = received.try_recv() {
            seen.push(event);
        }
        (to_server.join().unwrap(), to_editor.join().unwrap(), seen)
    }

    const SESSION: &[u8] = b"Content-Length: 2\r\n\r\n{}garbage\r\n\r\ncontent-length:   14\nContent-Type: x\n\n{\"cmd\":\"run\"}\nContent-Length: 33\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}";

    #[test]
    fn exit_is_the_notification_only() {
        assert!(is_exit(br#"{"jsonrpc":"2.0","method":"exit"}"#));
        assert!(is_exit(
            br#"{"jsonrpc": "2.0", "method": "exit", "params": null}"#
        ));
        assert!(!is_exit(br#"{"jsonrpc":"2.0","id":3,"method":"exit"}"#));
        assert!(!is_exit(br#"{"jsonrpc":"2.0","method":"shutdown","id":2}"#));
    }

    #[test]
    fn only_large_notifications_pass_before_they_are_observed() {
        let large = |body: &str| {
            format!(
                "{body}{}",
                " ".repeat(crate::observer::overlay::UNPARSED_FROM)
            )
        };
        assert!(Interest::may_need_verdict(
            br#"{"method":"textDocument/didOpen"}"#
        ));
        assert!(!Interest::may_need_verdict(
            large(r#"{"method":"textDocument/didOpen"}"#).as_bytes()
        ));
        assert!(Interest::may_need_verdict(
            large(r#"{"method":"workspace/executeCommand"}"#).as_bytes()
        ));
        assert!(Interest::may_need_verdict(
            large(r#"{"id":"ide-mcp/1","result":{}}"#).as_bytes()
        ));
    }

    /// The proxy's watch as it runs, over a real observer: a panic inside
    /// it is caught at its one boundary (the observer's) and forwarding
    /// never notices.
    #[test]
    fn every_byte_is_forwarded_even_when_the_observer_panics() {
        let ws = Arc::new(crate::LspWorkspace::new());
        let (observer, _outgoing) = crate::Observer::new(ws);
        let tap = super::super::tap::Tap::new(observer);
        let boom = br#"{"jsonrpc":"2.0","method":"$/ide-mcp/test/panic","params":{}}"#;
        let mut session = crate::framing::Message::from_body(boom).into_bytes();
        session.extend_from_slice(SESSION);
        let (to_server, to_editor, events) = run_editor_side(&session, &tap);
        assert_eq!(to_server, session);
        assert!(to_editor.is_empty());
        assert_eq!(events, [PumpEvent::ExitSent, PumpEvent::EditorEnded]);
    }

    #[test]
    fn an_answered_message_goes_back_to_the_editor_only() {
        let (to_server, to_editor, _) = run_editor_side(SESSION, &Answering);
        let kept = b"content-length:   14\nContent-Type: x\n\n{\"cmd\":\"run\"}\n";
        let mut expected = SESSION.to_vec();
        let at = memchr::memmem::find(&expected, kept).unwrap();
        expected.drain(at..at + kept.len());
        assert_eq!(to_server, expected);
        assert_eq!(to_editor, b"Content-Length: 6\r\n\r\nanswer");
    }
}
