//! The Claude Code IDE transport: JSON-RPC over a WebSocket on 127.0.0.1,
//! one message per text frame, with the upgrade checked before it happens.
//!
//! From the bottom up: [`upgrade`] checks an upgrade request's head and
//! writes the refusals, `admission` bounds the connections waiting to
//! authenticate and those served, [`stream`] is the WebSocket wire over any
//! byte stream, and this module the TCP server that ties them together.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::discovery::{self, IdeIdentity};
use crate::lockfile::Lockfile;
use crate::server::Server;
use crate::transport::handle::{ServerTask, close_all, stop_requested};
use crate::transport::wire::Limits;
use crate::transport::wire::MAX_MESSAGE_BYTES;

mod admission;
pub mod stream;
pub mod upgrade;

use admission::{Admission, PendingPlace};
use stream::Upgrader;

/// How many authenticated WebSocket connections one server serves at once by
/// default; beyond it, a client with the right token gets HTTP 503.
///
/// Sized for load, not for the one CLI: an idle connection costs about
/// 22 KiB (BENCHMARKS.md), so 1 024 of them cost 22 MiB.
pub const MAX_CONNECTIONS: usize = 1024;

/// How many connections may wait to authenticate at once by default; when
/// more arrive, the oldest waiting one is dropped. Connections that have not
/// shown the token never take an authenticated place.
pub const MAX_UNAUTHENTICATED: usize = 1024;

/// How long a client may take from connecting to a complete upgrade request,
/// by default. The CLI sends its request at once.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(3);

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
    /// The most authenticated connections served at once; beyond it a
    /// client with the right token gets 503.
    pub max_connections: usize,
    /// The most connections waiting to authenticate (connected, upgrade
    /// request not yet checked); beyond it the oldest is dropped.
    pub max_unauthenticated: usize,
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
    /// (it holds one of the `max_unauthenticated` places meanwhile).
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
            max_unauthenticated: MAX_UNAUTHENTICATED,
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
    // Dropped first: the loop is told to stop before the lockfile goes.
    task: ServerTask,
    lockfile: Option<Lockfile>,
}

impl WsServerHandle {
    /// The port served on 127.0.0.1 (for `CLAUDE_CODE_SSE_PORT`).
    pub fn port(&self) -> u16 {
        self.task.local_addr().port()
    }

    /// The address served: always 127.0.0.1.
    pub fn local_addr(&self) -> SocketAddr {
        self.task.local_addr()
    }

    /// The auth token clients must send in `x-claude-code-ide-authorization`.
    pub fn auth_token(&self) -> &str {
        self.task.token()
    }

    /// The lockfile, when one was written.
    pub fn lockfile_path(&self) -> Option<&Path> {
        self.lockfile.as_ref().map(Lockfile::path)
    }

    /// Stops accepting, closes every connection (code 1001), waits for them
    /// (at most a couple of seconds) and removes the lockfile.
    pub async fn shutdown(mut self) {
        self.task.shutdown().await;
        drop(self.lockfile.take());
    }

    /// Serves until SIGINT or SIGTERM (Ctrl-C, Ctrl-Break or the console
    /// closing on Windows: [`shutdown_signal`](crate::shutdown_signal)),
    /// then shuts down and removes the lockfile. A host binary calls this
    /// last in `main`.
    ///
    /// The handlers are installed only now, after the lockfile was
    /// published: a host that must not miss a signal sent the moment the
    /// lockfile appears calls [`shutdown_signal`](crate::shutdown_signal)
    /// before [`Server::serve_ws`], then [`shutdown_after`](Self::shutdown_after).
    pub async fn run_until_signal(self) -> io::Result<()> {
        self.shutdown_after(crate::signal::shutdown_signal()).await
    }

    /// Serves until `signal` resolves (e.g. a
    /// [`shutdown_signal`](crate::shutdown_signal) installed before the
    /// server started), then shuts down and removes the lockfile.
    pub async fn shutdown_after(
        self,
        signal: impl Future<Output = io::Result<()>>,
    ) -> io::Result<()> {
        let result = signal.await;
        self.shutdown().await;
        result
    }
}

impl Server {
    /// Serves the Claude Code IDE WebSocket on 127.0.0.1 and, unless told
    /// not to, writes the lockfile through which the CLI finds it.
    pub async fn serve_ws(&self, options: WsOptions) -> io::Result<WsServerHandle> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, options.port.unwrap_or(0))).await?;
        let local_addr = listener.local_addr()?;
        let token = discovery::choose_token(options.auth_token.as_deref())?;
        let lockfile = if options.write_lockfile {
            let identity = IdeIdentity {
                ide_name: &options.ide_name,
                workspace_folders: &options.workspace_folders,
            };
            Some(discovery::publish(
                identity,
                options.config_dir.as_deref(),
                local_addr.port(),
                &token,
            )?)
        } else {
            None
        };
        let server = self.clone();
        let task = ServerTask::spawn(local_addr, token.clone(), |stopped| {
            accept_loop(server, listener, options, token, stopped)
        });
        tracing::info!(%local_addr, lockfile = ?lockfile.as_ref().map(Lockfile::path), "serving the IDE WebSocket");
        Ok(WsServerHandle { task, lockfile })
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
    let mut upgrader = Upgrader::new(token, port);
    upgrader.max_message_bytes = options.max_message_bytes;
    upgrader.limits = Limits::with_write_timeout(options.write_timeout);
    let accept = Arc::new(Accept {
        server,
        upgrader,
        admission: Admission::new(options.max_connections, options.max_unauthenticated),
        handshake_timeout: options.handshake_timeout,
        stopped: stopped.clone(),
    });
    let mut connections = JoinSet::new();
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
                let _ = stream.set_nodelay(true);
                let accept = Arc::clone(&accept);
                let evicted = accept.admission.spawn_pending(&mut connections, |place| {
                    serve_connection(Arc::clone(&accept), stream, place)
                });
                if evicted > 0 {
                    tracing::debug!(evicted, pending = accept.admission.pending(), "dropped the oldest connections waiting to authenticate");
                }
            }
        }
    }
    drop(listener);
    close_all(&mut connections).await;
}

/// What every connection of one server shares.
struct Accept {
    server: Server,
    upgrader: Upgrader,
    admission: Arc<Admission>,
    handshake_timeout: Duration,
    stopped: watch::Receiver<bool>,
}

async fn serve_connection(accept: Arc<Accept>, stream: TcpStream, place: PendingPlace) {
    let mut place = Some(place);
    let admit = || accept.admission.authenticate(&mut place);
    let handshake = accept.upgrader.handshake(stream, admit);
    let Ok(Some((wire, _authenticated))) =
        tokio::time::timeout(accept.handshake_timeout, handshake).await
    else {
        return tracing::debug!("connection refused, timed out or gone before its upgrade");
    };
    let stopped = Some(accept.stopped.clone());
    if let Err(err) = accept
        .server
        .serve_wire(wire, accept.upgrader.limits, stopped)
        .await
    {
        tracing::debug!(%err, "connection ended");
    }
}
