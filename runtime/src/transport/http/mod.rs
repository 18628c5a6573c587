//! MCP's Streamable HTTP transport on one endpoint, `/mcp`: what `claude mcp
//! add --transport http` and the official SDKs' HTTP clients connect to.
//!
//! - **2026-07-28:** each POST is a self-contained exchange: one request,
//!   served by a fresh [`Session`](crate::Session), answered as `application/json`; its
//!   `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers must agree
//!   with the body (else 400, -32020). A notification is acknowledged with 202.
//! - **2025-11-25 and older:** an `initialize` POST opens a session whose id
//!   comes back in `Mcp-Session-Id`; later POSTs name it (404 for an unknown
//!   one), DELETE ends it.
//! - In both eras, a call that sends its progress (for the request's
//!   `_meta.progressToken`) or notifications of its own before its result is
//!   answered as `text/event-stream` instead: those events, then the result,
//!   then the stream ends.
//! - A GET of a 2025-11-25 session (`Mcp-Session-Id`) opens its event
//!   stream: the server-wide notifications ([`Notifier`](crate::Notifier):
//!   the latest states first, then `selection_changed`, `list_changed`, …)
//!   and what the session's calls report after their POST was answered.
//!   One per session (a second GET replaces the first); it ends with the
//!   session (DELETE, idleness, shutdown). A GET without a session: 405.
//!
//! Every request passes the gate first (the one the IDE WebSocket runs
//! too): `Host` must name loopback and this port and no `Origin` may come
//! unless configured (403), the bearer token must match (401), the body must be
//! JSON (415), `Accept` must take JSON and event streams (406), and the body
//! must fit the limit (413). Beyond the in-flight bound a request gets 503.
//! Closing a POST's connection, or its event stream, before its answer
//! cancels the call.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
#[cfg(unix)]
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

mod check;
mod exchange;
mod response;
mod route;
mod sessions;
mod shared;
mod sse;

pub use check::SESSION_HEADER;
pub use route::ENDPOINT;
pub use shared::HttpOptions;

use route::handle;
use sessions::Sessions;
use shared::Shared;

use crate::server::Server;
use crate::transport::gate::Hosts;
use crate::transport::handle::{ServerTask, close_all, stop_requested};

/// What an HTTP server holds right now (for tests and monitoring).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HttpStats {
    /// Open 2025-11-25 sessions.
    pub sessions: usize,
    /// Calls of sessions still running (each stops when its session ends).
    pub session_calls: usize,
    /// Requests being answered.
    pub exchanges: usize,
    /// Open connections.
    pub connections: usize,
}

/// A running HTTP server. Dropping it stops accepting and closes the
/// connections; [`shutdown`](Self::shutdown) does the same and waits.
#[derive(Debug)]
pub struct HttpServerHandle {
    task: ServerTask,
    shared: Arc<Shared>,
    /// The Unix socket served, if any (dropped after the task: removed).
    socket: Option<SocketFile>,
}

impl HttpServerHandle {
    /// The port served (0 on a Unix socket).
    pub fn port(&self) -> u16 {
        self.task.local_addr().port()
    }

    /// The Unix socket served, if this server listens on one.
    pub fn socket_path(&self) -> Option<&Path> {
        self.socket.as_ref().map(|socket| socket.0.as_path())
    }

    /// The address served.
    pub fn local_addr(&self) -> SocketAddr {
        self.task.local_addr()
    }

    /// The endpoint's URL, e.g. `http://127.0.0.1:8123/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{ENDPOINT}", self.task.local_addr())
    }

    /// The bearer token clients must send.
    pub fn auth_token(&self) -> &str {
        self.task.token()
    }

    /// The command that adds this server to the `claude` CLI as `name`.
    pub fn claude_mcp_add(&self, name: &str) -> String {
        format!(
            "claude mcp add --transport http {name} {} --header \"Authorization: Bearer {}\"",
            self.url(),
            self.auth_token()
        )
    }

    /// What the server holds right now.
    pub fn stats(&self) -> HttpStats {
        HttpStats {
            sessions: self.shared.sessions.len(),
            session_calls: self.shared.sessions.calls(),
            exchanges: self.shared.exchanges.load(Ordering::Relaxed),
            connections: self.shared.connections.load(Ordering::Relaxed),
        }
    }

    /// Stops accepting, ends every session and closes every connection
    /// (waiting a couple of seconds at most); a Unix socket is removed.
    pub async fn shutdown(mut self) {
        self.task.shutdown().await;
        drop(self.socket.take());
    }
}

impl Server {
    /// Serves MCP's Streamable HTTP transport on `/mcp` (127.0.0.1 and a
    /// fresh bearer token unless `options` say otherwise).
    pub async fn serve_http(&self, options: HttpOptions) -> io::Result<HttpServerHandle> {
        let token = token(&options)?;
        let listener = TcpListener::bind((options.address, options.port.unwrap_or(0))).await?;
        let local_addr = listener.local_addr()?;
        let hosts = if options.address.is_loopback() {
            Hosts::Loopback {
                port: local_addr.port(),
            }
        } else {
            Hosts::Any
        };
        let handle = self.spawn_http(listener, local_addr, token, hosts, options, None);
        tracing::info!(%local_addr, "serving MCP over HTTP on {ENDPOINT}");
        Ok(handle)
    }

    /// Serves the same transport over a Unix socket bound at `path`, which
    /// must not exist, in a directory only this user can enter (the
    /// caller's to make: the socket's own mode is not checked by every
    /// system). `Host` must be `localhost` (or `127.0.0.1`, `[::1]`) with no
    /// port; `options.credential` names how clients show the token
    /// (`options.address` and `port` are unused). The socket is removed
    /// when the handle shuts down or is dropped. Unix only.
    #[cfg(unix)]
    #[allow(
        clippy::unused_async,
        reason = "as `serve_http`: called within a runtime, which binding needs"
    )]
    pub async fn serve_http_unix(
        &self,
        path: &Path,
        options: HttpOptions,
    ) -> io::Result<HttpServerHandle> {
        let token = token(&options)?;
        let listener = UnixListener::bind(path)?;
        let socket = SocketFile(path.to_path_buf());
        // No address: the handle reports 127.0.0.1:0.
        let local_addr = SocketAddr::from(([127, 0, 0, 1], 0));
        let handle = self.spawn_http(
            listener,
            local_addr,
            token,
            Hosts::Local,
            options,
            Some(socket),
        );
        tracing::info!(socket = %path.display(), "serving MCP over HTTP on {ENDPOINT} (Unix socket)");
        Ok(handle)
    }

    fn spawn_http<L: Accept>(
        &self,
        listener: L,
        local_addr: SocketAddr,
        token: String,
        hosts: Hosts,
        options: HttpOptions,
        socket: Option<SocketFile>,
    ) -> HttpServerHandle {
        let shared = Arc::new(Shared {
            server: self.clone(),
            token: token.clone(),
            hosts,
            sessions: Sessions::new(options.max_sessions, options.session_idle),
            in_flight: Arc::new(Semaphore::new(options.max_in_flight)),
            exchanges: AtomicUsize::new(0),
            connections: AtomicUsize::new(0),
            options,
        });
        let task = ServerTask::spawn(local_addr, token, {
            let shared = Arc::clone(&shared);
            |stopped| accept_loop(listener, shared, stopped)
        });
        HttpServerHandle {
            task,
            shared,
            socket,
        }
    }
}

/// The token `options` give, checked, or a fresh one.
fn token(options: &HttpOptions) -> io::Result<String> {
    match &options.auth_token {
        Some(token) if token.len() >= 32 && token.bytes().all(|b| b.is_ascii_graphic()) => {
            Ok(token.clone())
        }
        Some(_) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "an HTTP bearer token must have at least 32 printable ASCII characters and no spaces",
        )),
        None => crate::discovery::fresh_token(),
    }
}

/// A Unix socket this server bound, removed when the server is gone.
#[derive(Debug)]
struct SocketFile(PathBuf);

impl Drop for SocketFile {
    fn drop(&mut self) {
        if let Err(err) = std::fs::remove_file(&self.0)
            && err.kind() != io::ErrorKind::NotFound
        {
            tracing::warn!(socket = %self.0.display(), %err, "cannot remove the socket");
        }
    }
}

/// A listener the accept loop takes connections from.
trait Accept: Send + 'static {
    /// One accepted connection.
    type Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    /// The next connection.
    fn accept(&self) -> impl Future<Output = io::Result<Self::Stream>> + Send;
}

impl Accept for TcpListener {
    type Stream = TcpStream;
    async fn accept(&self) -> io::Result<TcpStream> {
        let (stream, _) = TcpListener::accept(self).await?;
        let _ = stream.set_nodelay(true);
        Ok(stream)
    }
}

#[cfg(unix)]
impl Accept for UnixListener {
    type Stream = UnixStream;
    async fn accept(&self) -> io::Result<UnixStream> {
        UnixListener::accept(self).await.map(|(stream, _)| stream)
    }
}

async fn accept_loop<L: Accept>(
    listener: L,
    shared: Arc<Shared>,
    mut stopped: watch::Receiver<bool>,
) {
    let mut connections = JoinSet::new();
    let mut reap = tokio::time::interval(Sessions::reap_every(shared.options.session_idle));
    loop {
        tokio::select! {
            () = stop_requested(&mut stopped) => break,
            _ = reap.tick() => shared.sessions.reap(),
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => {
                let Ok(stream) = accepted else { continue };
                if connections.len() >= shared.options.max_connections {
                    tracing::warn!("HTTP connection refused: too many connections");
                    continue; // dropped: closed at once
                }
                connections.spawn(serve_connection(stream, Arc::clone(&shared), stopped.clone()));
            }
        }
    }
    shared.sessions.clear();
    close_all(&mut connections).await;
}

async fn serve_connection<S>(stream: S, shared: Arc<Shared>, mut stopped: watch::Receiver<bool>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    shared.connections.fetch_add(1, Ordering::Relaxed);
    let service = {
        let shared = Arc::clone(&shared);
        service_fn(move |request| {
            let shared = Arc::clone(&shared);
            async move { Ok::<_, Infallible>(handle(&shared, request).await) }
        })
    };
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(shared.options.header_timeout)
        .serve_connection(TokioIo::new(stream), service);
    let mut connection = std::pin::pin!(connection);
    let result = tokio::select! {
        result = connection.as_mut() => result,
        () = stop_requested(&mut stopped) => {
            // The answer being written is finished, then the connection closes.
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(err) = result {
        tracing::debug!(%err, "HTTP connection ended with an error");
    }
    shared.connections.fetch_sub(1, Ordering::Relaxed);
}
