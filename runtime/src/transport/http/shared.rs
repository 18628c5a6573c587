//! What one HTTP server is configured with, and what all its connections
//! share.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::transport::gate::{Credential, Hosts};

use super::sessions::Sessions;
use crate::server::Server;
use crate::transport::wire::MAX_MESSAGE_BYTES;

/// How to serve Streamable HTTP ([`Server::serve_http`](crate::Server::serve_http)). Start from
/// `HttpOptions::default()` and set what you need.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// The address to listen on: 127.0.0.1 by default. Any other address
    /// exposes the tools beyond this machine, guarded by the token alone.
    pub address: IpAddr,
    /// The port; `None` for an ephemeral one.
    pub port: Option<u16>,
    /// The bearer token clients send as `Authorization: Bearer <token>`;
    /// `None` (the default) makes a fresh one of 128 random bits. A token
    /// given here must have at least 32 characters.
    pub auth_token: Option<String>,
    /// Where clients show the token: [`Credential::BEARER`] by default.
    pub credential: Credential,
    /// Browser origins allowed, exactly as a browser writes them (e.g.
    /// `"https://inspector.example"`); none by default: a request with any
    /// other `Origin` gets 403, as it does from the IDE WebSocket.
    pub allowed_origins: Vec<String>,
    /// Serves 2025-11-25 sessions only: a request outside a session other
    /// than `initialize` (2026-07-28's stateless exchanges, `server/discover`
    /// among them) is answered -32601, so that a client that probes
    /// `server/discover` falls back to `initialize` and opens the session's
    /// event stream. `false` by default.
    pub sessions_only: bool,
    /// The largest request body accepted; larger ones get 413.
    pub max_body_bytes: usize,
    /// The most requests being answered at once, over all clients; more get 503.
    pub max_in_flight: usize,
    /// The most 2025-11-25 sessions open at once; more `initialize`s get 503.
    pub max_sessions: usize,
    /// How long a 2025-11-25 session may stay idle before it is ended.
    pub session_idle: Duration,
    /// The most connections served at once; more are closed at once.
    pub max_connections: usize,
    /// How long a client may take to send a request's headers.
    pub header_timeout: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            address: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: None,
            auth_token: None,
            credential: Credential::BEARER,
            sessions_only: false,
            allowed_origins: Vec::new(),
            max_body_bytes: MAX_MESSAGE_BYTES,
            max_in_flight: 256,
            max_sessions: 64,
            session_idle: Duration::from_mins(30),
            max_connections: 256,
            header_timeout: Duration::from_secs(10),
        }
    }
}

/// What every connection of one HTTP server shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) server: Server,
    pub(crate) token: String,
    /// The `Host` values admitted.
    pub(crate) hosts: Hosts,
    pub(crate) options: HttpOptions,
    pub(crate) sessions: Sessions,
    pub(crate) in_flight: Arc<Semaphore>,
    pub(crate) exchanges: AtomicUsize,
    pub(super) connections: AtomicUsize,
}
