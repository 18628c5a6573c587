//! The WebSocket wire over any byte stream: the upgrade handshake (read the
//! request head, check it, answer `101` or a complete refusal) and one
//! JSON-RPC message per text frame.
//!
//! Generic over `AsyncRead + AsyncWrite`, so that a TCP socket, a Unix
//! socket or an in-memory `tokio::io::duplex` serve alike:
//!
//! ```
//! use ide_mcp_runtime::transport::ws::stream::Upgrader;
//! use tokio_tungstenite::tungstenite::{Message, client::IntoClientRequest as _};
//! use futures_util::{SinkExt as _, StreamExt as _};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = ide_mcp_runtime::Server::builder("editor", "1.0")
//!     .registry(std::sync::Arc::new(ide_mcp_runtime::Registry::from_tools([]).unwrap()))
//!     .build()
//!     .unwrap();
//! let token = "0123456789abcdef0123456789abcdef";
//! let (client_io, server_io) = tokio::io::duplex(64 * 1024);
//! let upgrader = Upgrader::new(token.to_owned(), 80);
//! tokio::spawn(async move { server.serve_ws_stream(server_io, &upgrader, None).await });
//!
//! let mut request = "ws://127.0.0.1:80/".into_client_request().unwrap();
//! request.headers_mut().insert("x-claude-code-ide-authorization", token.parse().unwrap());
//! let (mut ws, _) = tokio_tungstenite::client_async(request, client_io).await.unwrap();
//! ws.send(Message::text(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)).await.unwrap();
//! let answer = ws.next().await.unwrap().unwrap();
//! assert_eq!(answer.to_text().unwrap(), r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
//! # }
//! ```

use std::io;
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};
use tokio::sync::watch;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::{CloseFrame, Frame, Utf8Bytes};
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Bytes, Error as WsError, Message};

use super::upgrade::{self, Refusal};
use crate::server::Server;
use crate::transport::wire::MAX_MESSAGE_BYTES;
use crate::transport::wire::{Limits, Outbox, Recv, Wire};

/// The read buffer reserved per WebSocket connection (tungstenite's default
/// is 128 KiB); the per-idle-connection footprint is measured in BENCHMARKS.md.
pub const READ_BUFFER_BYTES: usize = 4 * 1024;

/// The largest upgrade request head read; a longer one gets `431`.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

/// How long a closed connection keeps reading (and discarding) so that the
/// client receives the close frame or the refusal before the socket goes
/// away (closing with unread input makes the kernel send a reset, which can
/// destroy the response in the client's buffer).
const CLOSE_LINGER: Duration = Duration::from_secs(1);

/// What an upgrade request must carry, and the limits of the connections it
/// opens.
#[derive(Clone, Debug)]
pub struct Upgrader {
    token: String,
    port: u16,
    /// The largest message or frame accepted; larger ones close the
    /// connection with code 1009.
    pub max_message_bytes: usize,
    /// The limits of each upgraded connection.
    pub limits: Limits,
}

impl Upgrader {
    /// Upgrades requests that carry `token` and name `port` (or none) in
    /// their `Host`.
    pub fn new(token: String, port: u16) -> Self {
        Self {
            token,
            port,
            max_message_bytes: MAX_MESSAGE_BYTES,
            limits: Limits::default(),
        }
    }

    fn config(&self) -> WebSocketConfig {
        let mut config = WebSocketConfig::default();
        config.max_message_size = Some(self.max_message_bytes);
        config.max_frame_size = Some(self.max_message_bytes);
        // tungstenite reserves 128 KiB per connection for reading by default;
        // requests are small, so an idle connection keeps a small buffer (it
        // still grows for a large message).
        config.read_buffer_size = READ_BUFFER_BYTES;
        config
    }

    /// Reads and checks the upgrade request on `stream`. On success, `admit`
    /// decides (after the token was checked) whether there is room: it
    /// returns what holds the place, or a refusal. Answers `101` and returns
    /// the wire with the place; else answers the refusal (or nothing, when
    /// the request could not be read at all) and returns `None`.
    pub(crate) async fn handshake<S, P>(
        &self,
        mut stream: S,
        admit: impl FnOnce() -> Result<P, Refusal>,
    ) -> Option<(WsWire<S>, P)>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send,
    {
        let (buf, head_len) = match read_head(&mut stream).await {
            Ok(Ok(read)) => read,
            Ok(Err(refusal)) => {
                refuse(&mut stream, refusal).await;
                return None;
            }
            Err(err) => {
                tracing::debug!(%err, "connection ended before its request");
                return None;
            }
        };
        let accepted = upgrade::check_upgrade(&buf[..head_len], &self.token, self.port)
            .and_then(|accepted| Ok((accepted, admit()?)));
        let (accepted, place) = match accepted {
            Ok(accepted) => accepted,
            Err(refusal) => {
                refuse(&mut stream, refusal).await;
                return None;
            }
        };
        if let Err(err) = stream.write_all(&accepted.response()).await {
            tracing::debug!(%err, "could not answer the upgrade");
            return None;
        }
        // A client may send its first frames right behind the request.
        let tail = buf[head_len..].to_vec();
        drop(buf);
        let ws =
            WebSocketStream::from_partially_read(stream, tail, Role::Server, Some(self.config()))
                .await;
        Some((WsWire::new(ws), place))
    }
}

impl Server {
    /// Serves the Claude Code IDE WebSocket protocol on one connection of
    /// any byte stream: checks its upgrade request with `upgrader` (a refusal
    /// gets its complete HTTP answer), then serves MCP until the client
    /// leaves or `shutdown` turns `true`.
    ///
    /// [`serve_ws`](Self::serve_ws) does this for every TCP connection on
    /// 127.0.0.1, with admission limits; call this for a stream of your own
    /// (an in-memory duplex in tests). It does not time out a slow request:
    /// wrap it in `tokio::time::timeout` when the peer is untrusted.
    pub async fn serve_ws_stream<S>(
        &self,
        stream: S,
        upgrader: &Upgrader,
        shutdown: Option<watch::Receiver<bool>>,
    ) -> io::Result<()>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send,
    {
        let Some((wire, ())) = upgrader.handshake(stream, || Ok(())).await else {
            return Ok(());
        };
        self.serve_wire(wire, upgrader.limits, shutdown).await
    }
}

/// Reads until the request head is complete: the buffer and the head's
/// length (bytes after it belong to the WebSocket), a refusal for a head
/// that cannot be read, or the error that ended the connection first.
async fn read_head<S: AsyncRead + Unpin>(
    stream: &mut S,
) -> io::Result<Result<(Vec<u8>, usize), Refusal>> {
    let mut buf = Vec::with_capacity(1024);
    loop {
        if buf.len() >= MAX_HEAD_BYTES {
            return Ok(Err(Refusal::TOO_LARGE));
        }
        buf.reserve(1024.min(MAX_HEAD_BYTES - buf.len()));
        let read = (&mut *stream)
            .take((MAX_HEAD_BYTES - buf.len()) as u64)
            .read_buf(&mut buf)
            .await?;
        if read == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        match upgrade::head_length(&buf) {
            Ok(Some(len)) => return Ok(Ok((buf, len))),
            Ok(None) => {}
            Err(refusal) => return Ok(Err(refusal)),
        }
    }
}

/// Writes `refusal`'s complete response, ends the write side, and reads
/// what the client still sends for a moment so that it gets the response.
async fn refuse<S: AsyncRead + AsyncWrite + Unpin>(stream: &mut S, refusal: Refusal) {
    tracing::debug!(status = refusal.status, "request refused");
    if stream.write_all(&refusal.response()).await.is_err() {
        return;
    }
    let _ = stream.shutdown().await;
    discard_input(stream).await;
}

/// Reads and discards until EOF or for at most [`CLOSE_LINGER`].
async fn discard_input<S: AsyncRead + Unpin>(stream: &mut S) {
    let mut sink = [0u8; 1024];
    let linger = async {
        while let Ok(n) = stream.read(&mut sink).await {
            if n == 0 {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(CLOSE_LINGER, linger).await;
}

/// The WebSocket [`Wire`]: one JSON-RPC message per text frame.
#[derive(Debug)]
pub struct WsWire<S> {
    ws: WebSocketStream<S>,
    current: Utf8Bytes,
}

impl<S: AsyncRead + AsyncWrite + Unpin> WsWire<S> {
    /// A wire over an upgraded WebSocket (the server side).
    pub fn new(ws: WebSocketStream<S>) -> Self {
        Self {
            ws,
            current: Utf8Bytes::default(),
        }
    }

    /// Closes with `code`, then discards input for a moment so that the
    /// client reads the close frame rather than a reset.
    async fn close_with(&mut self, code: CloseCode, reason: &'static str) {
        let frame = CloseFrame {
            code,
            reason: Utf8Bytes::from_static(reason),
        };
        let _ = tokio::time::timeout(CLOSE_LINGER, self.ws.close(Some(frame))).await;
        discard_input(self.ws.get_mut()).await;
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> Wire for WsWire<S> {
    const TERMINATOR: Option<u8> = None;
    const DRAIN_ON_EOF: bool = false;

    async fn recv(&mut self) -> Recv {
        // Let go of the last message first: while its bytes are alive they
        // share tungstenite's read buffer, which then cannot be reused and
        // is regrown in small steps, costing extra `recv` calls per frame.
        self.current = Utf8Bytes::default();
        match self.ws.next().await {
            None | Some(Err(WsError::ConnectionClosed | WsError::AlreadyClosed)) => Recv::Closed,
            Some(Ok(Message::Text(text))) => {
                self.current = text;
                Recv::Message
            }
            Some(Ok(Message::Binary(_))) => {
                self.close_with(
                    CloseCode::Unsupported,
                    "binary frames are not supported; send JSON-RPC as text",
                )
                .await;
                Recv::Closed
            }
            // Pings are answered by tungstenite on the next read or write; a
            // close is answered likewise, after which the stream ends.
            Some(Ok(
                Message::Ping(_) | Message::Pong(_) | Message::Close(_) | Message::Frame(_),
            )) => Recv::Skip,
            Some(Err(WsError::Capacity(err))) => {
                tracing::warn!(%err, "message over the size limit; closing");
                self.close_with(CloseCode::Size, "message too big").await;
                Recv::Closed
            }
            Some(Err(WsError::Utf8(_))) => {
                self.close_with(CloseCode::Invalid, "text frame is not UTF-8")
                    .await;
                Recv::Closed
            }
            Some(Err(WsError::Protocol(err))) => {
                tracing::debug!(%err, "WebSocket protocol error; closing");
                self.close_with(CloseCode::Protocol, "protocol error").await;
                Recv::Closed
            }
            Some(Err(WsError::Io(err))) => Recv::Failed(err),
            Some(Err(err)) => Recv::Failed(io::Error::other(err)),
        }
    }

    fn message(&self) -> &[u8] {
        self.current.as_bytes()
    }

    async fn send(&mut self, out: &Outbox) -> io::Result<()> {
        for message in out.messages() {
            // The session checked that every message is UTF-8; send it as a
            // text frame without a second check.
            let frame = Frame::message(
                Bytes::copy_from_slice(message),
                OpCode::Data(Data::Text),
                true,
            );
            self.ws.feed(Message::Frame(frame)).await.map_err(into_io)?;
        }
        self.ws.flush().await.map_err(into_io)
    }

    async fn close(&mut self) {
        self.close_with(CloseCode::Away, "server shutting down")
            .await;
    }
}

fn into_io(err: WsError) -> io::Error {
    match err {
        WsError::Io(err) => err,
        err => io::Error::other(err),
    }
}
