//! The Claude Code IDE transport: JSON-RPC over a WebSocket on 127.0.0.1,
//! one message per text frame, with the upgrade checked before it happens.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use tokio::io::AsyncReadExt as _;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::{CloseFrame, Frame, Utf8Bytes};
use tokio_tungstenite::tungstenite::{Bytes, Error as WsError, Message};

use crate::connection::{self, Outbox, Recv, Wire};
use crate::lockfile::{self, Lockfile, LockfileContent};
use crate::server::Server;
use crate::transport::MAX_MESSAGE_BYTES;
use crate::transport::upgrade::check_upgrade;

/// How many WebSocket connections one server accepts at once by default;
/// beyond it, new connections get HTTP 503 and are closed.
pub const MAX_CONNECTIONS: usize = 64;

/// The read buffer reserved per WebSocket connection (tungstenite's default
/// is 128 KiB); the per-idle-connection footprint is measured in BENCHMARKS.md.
pub const READ_BUFFER_BYTES: usize = 4 * 1024;

/// How long a client may take to send its upgrade request, by default.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long `shutdown` waits for connections to close before aborting them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// How long a closed connection keeps reading (and discarding) so that the
/// client receives the close frame before the socket goes away.
const CLOSE_LINGER: Duration = Duration::from_secs(1);

/// How to serve the IDE WebSocket ([`Server::serve_ws`]). Start from
/// `WsOptions::default()` and set what you need.
#[derive(Clone, Debug)]
pub struct WsOptions {
    /// The port on 127.0.0.1; `None` for an ephemeral one.
    pub port: Option<u16>,
    /// The folders whose CLI sessions see this server (absolute paths).
    pub workspace_folders: Vec<String>,
    /// The IDE's name in the lockfile, shown by the CLI's `/ide`.
    pub ide_name: String,
    /// Whether to write the lockfile the CLI discovers servers by.
    pub write_lockfile: bool,
    /// Claude Code's configuration directory; `None` for
    /// [`default_config_dir`](crate::lockfile::default_config_dir). Tests pass
    /// a temporary directory here rather than setting the process-global
    /// `CLAUDE_CONFIG_DIR`.
    pub config_dir: Option<PathBuf>,
    /// The most connections served at once.
    pub max_connections: usize,
    /// The largest message or frame accepted; larger ones close that
    /// connection with code 1009.
    pub max_message_bytes: usize,
    /// How long sending may wait on a client that does not read before it is
    /// disconnected.
    pub write_timeout: Duration,
    /// The auth token; `None` (the default, and the only right choice for an
    /// editor) makes a fresh one of 128 random bits. A benchmark or test
    /// harness that must know the token before the server starts may set one
    /// of at least 32 characters.
    pub auth_token: Option<String>,
    /// How long a client may take from connecting to a completed upgrade; a
    /// connection that sends nothing, or half a request, is closed after it
    /// (it holds one of the `max_connections` meanwhile).
    pub handshake_timeout: Duration,
}

impl Default for WsOptions {
    fn default() -> Self {
        Self {
            port: None,
            workspace_folders: Vec::new(),
            ide_name: "ide-mcp".to_owned(),
            write_lockfile: true,
            config_dir: None,
            max_connections: MAX_CONNECTIONS,
            max_message_bytes: MAX_MESSAGE_BYTES,
            write_timeout: Duration::from_secs(30),
            auth_token: None,
            handshake_timeout: HANDSHAKE_TIMEOUT,
        }
    }
}

/// A running WebSocket server. Dropping it stops accepting, closes the
/// connections and removes the lockfile; [`shutdown`](Self::shutdown) does
/// the same and waits for it.
#[derive(Debug)]
pub struct WsServerHandle {
    local_addr: SocketAddr,
    token: String,
    lockfile: Option<Lockfile>,
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl WsServerHandle {
    /// The port served on 127.0.0.1 (for `CLAUDE_CODE_SSE_PORT`).
    pub fn port(&self) -> u16 {
        self.local_addr.port()
    }

    /// The address served: always 127.0.0.1.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The auth token clients must send in `x-claude-code-ide-authorization`.
    pub fn auth_token(&self) -> &str {
        &self.token
    }

    /// The lockfile, when one was written.
    pub fn lockfile_path(&self) -> Option<&Path> {
        self.lockfile.as_ref().map(Lockfile::path)
    }

    /// Stops accepting, closes every connection (code 1001), waits for them
    /// (at most a couple of seconds) and removes the lockfile.
    pub async fn shutdown(mut self) {
        self.stop.send_replace(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        drop(self.lockfile.take());
    }

    /// Serves until SIGINT or SIGTERM (Ctrl-C elsewhere), then shuts down and
    /// removes the lockfile. A host binary calls this last in `main`.
    pub async fn run_until_signal(self) -> io::Result<()> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let mut term = signal(SignalKind::terminate())?;
            tokio::select! {
                r = tokio::signal::ctrl_c() => r?,
                _ = term.recv() => {}
            }
        }
        #[cfg(not(unix))]
        tokio::signal::ctrl_c().await?;
        tracing::info!("signal received; shutting down");
        self.shutdown().await;
        Ok(())
    }
}

impl Drop for WsServerHandle {
    fn drop(&mut self) {
        self.stop.send_replace(true);
    }
}

/// A fresh auth token: 128 bits from the OS RNG, written as a UUID
/// (`8-4-4-4-12` hex digits). Not a v4 UUID: all 128 bits are random, where
/// v4 fixes six of them.
pub fn fresh_token() -> io::Result<String> {
    let mut bytes = [0_u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|err| io::Error::other(format!("the OS RNG failed: {err}")))?;
    Ok(uuid::Uuid::from_bytes(bytes).hyphenated().to_string())
}

impl Server {
    /// Serves the Claude Code IDE WebSocket on 127.0.0.1 and, unless told
    /// not to, writes the lockfile through which the CLI finds it.
    pub async fn serve_ws(&self, options: WsOptions) -> io::Result<WsServerHandle> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, options.port.unwrap_or(0))).await?;
        let local_addr = listener.local_addr()?;
        let token = match &options.auth_token {
            Some(token) if token.len() >= 32 => token.clone(),
            Some(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "an auth token given in `WsOptions` must have at least 32 characters",
                ));
            }
            None => fresh_token()?,
        };
        let lockfile = if options.write_lockfile {
            let dir = options
                .config_dir
                .clone()
                .or_else(lockfile::default_config_dir)
                .ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::NotFound,
                        "no home directory and no CLAUDE_CONFIG_DIR for the lockfile",
                    )
                })?;
            let content = LockfileContent {
                pid: std::process::id(),
                workspace_folders: options.workspace_folders.clone(),
                ide_name: options.ide_name.clone(),
                transport: "ws".to_owned(),
                running_in_windows: false,
                auth_token: token.clone(),
            };
            Some(Lockfile::create(&dir, local_addr.port(), &content)?)
        } else {
            None
        };
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(accept_loop(
            self.clone(),
            listener,
            options,
            token.clone(),
            stopped,
        ));
        tracing::info!(%local_addr, lockfile = ?lockfile.as_ref().map(Lockfile::path), "serving the IDE WebSocket");
        Ok(WsServerHandle {
            local_addr,
            token,
            lockfile,
            stop,
            task: Some(task),
        })
    }
}

async fn accept_loop(
    server: Server,
    listener: TcpListener,
    options: WsOptions,
    token: String,
    mut stopped: watch::Receiver<bool>,
) {
    let port = listener.local_addr().map_or(0, |a| a.port());
    let mut connections = JoinSet::new();
    let connection_stop = stopped.clone();
    loop {
        tokio::select! {
            biased;
            () = stop_requested(&mut stopped) => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(err) => {
                        // Out of file descriptors and the like: wait rather than spin.
                        tracing::warn!(%err, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                if connections.len() >= options.max_connections {
                    refuse(&stream);
                    continue;
                }
                let _ = stream.set_nodelay(true);
                connections.spawn(serve_connection(server.clone(), stream, options.clone(), token.clone(), port, connection_stop.clone()));
            }
        }
    }
    drop(listener);
    let closing = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(SHUTDOWN_GRACE, closing).await.is_err() {
        connections.abort_all();
    }
}

async fn stop_requested(stopped: &mut watch::Receiver<bool>) {
    // An error means the handle is gone: stop too.
    let _ = stopped.wait_for(|stop| *stop).await;
}

/// Answers a connection over the limit with 503 without spending a task on it.
fn refuse(stream: &TcpStream) {
    tracing::warn!("connection refused: too many connections");
    let _ = stream.try_write(
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
}

async fn serve_connection(
    server: Server,
    stream: TcpStream,
    options: WsOptions,
    token: String,
    port: u16,
    stopped: watch::Receiver<bool>,
) {
    let mut config = WebSocketConfig::default();
    config.max_message_size = Some(options.max_message_bytes);
    config.max_frame_size = Some(options.max_message_bytes);
    // tungstenite reserves 128 KiB per connection for reading by default;
    // requests are small, so an idle connection keeps a small buffer (it
    // still grows for a large message).
    config.read_buffer_size = READ_BUFFER_BYTES;
    #[allow(clippy::result_large_err)] // tungstenite's callback signature
    let callback = |request: &_, response| check_upgrade(request, response, &token, port);
    let handshake = tokio_tungstenite::accept_hdr_async_with_config(stream, callback, Some(config));
    let ws = match tokio::time::timeout(options.handshake_timeout, handshake).await {
        Ok(Ok(ws)) => ws,
        Ok(Err(err)) => return tracing::debug!(%err, "WebSocket upgrade refused or failed"),
        Err(_) => return tracing::debug!("WebSocket upgrade timed out"),
    };
    let wire = WsWire {
        ws,
        current: Utf8Bytes::default(),
    };
    let limits = connection::Limits {
        write_timeout: options.write_timeout,
    };
    if let Err(err) = connection::run(server, wire, limits, Some(stopped)).await {
        tracing::debug!(%err, "connection ended");
    }
}

struct WsWire {
    ws: WebSocketStream<TcpStream>,
    current: Utf8Bytes,
}

impl WsWire {
    /// Closes with `code`, then discards input for a moment so that the
    /// client reads the close frame rather than a reset.
    async fn close_with(&mut self, code: CloseCode, reason: &'static str) {
        let frame = CloseFrame {
            code,
            reason: Utf8Bytes::from_static(reason),
        };
        let _ = tokio::time::timeout(CLOSE_LINGER, self.ws.close(Some(frame))).await;
        let stream = self.ws.get_mut();
        let mut sink = [0u8; 8192];
        let linger = async {
            while let Ok(n) = stream.read(&mut sink).await {
                if n == 0 {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(CLOSE_LINGER, linger).await;
    }
}

impl Wire for WsWire {
    const TERMINATOR: Option<u8> = None;
    const DRAIN_ON_EOF: bool = false;

    async fn recv(&mut self) -> Recv {
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
