//! One MCP session, independent of the transport: the lifecycle
//! (`initialize`, `notifications/initialized`), the method table and the
//! protocol errors, for both eras: handshake (2024-11-05 to 2025-11-25) and
//! stateless (2026-07-28, see [`era`]). Transports feed it one
//! message at a time and send what it appends to their output buffer.

use std::borrow::Cow;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::dispatch::{self, InFlight};
use crate::era;
use crate::era::{Era, PROTOCOL_VERSIONS};
use crate::extract::Call;
use crate::items;
use crate::jsonrpc::{self, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, Message, RequestId};
use crate::peer::{Peer, PeerRef};
use crate::request::{self, CallParams, Parsed, Request, cancelled_request};
use crate::server::Server;

/// One client's session: feed it messages with [`handle`](Self::handle), and
/// collect the answers of calls that complete later with
/// [`complete`](Self::complete).
///
/// `server/discover`, `ping` and stateless requests (a 2026-07-28 version in
/// `params._meta`) are served at any time; other requests before `initialize`
/// are answered with -32600 (invalid request: the JSON-RPC code for a request
/// that is not acceptable as sent), as is a second `initialize`. A `_meta`
/// version this server does not speak is answered with -32022 and the
/// supported versions in `data.supported`.
pub struct Session {
    server: Server,
    version: Option<&'static str>,
    initialized: bool,
    /// The client sent the IDE protocol's `ide_connected`.
    ide_connected: bool,
    inflight: InFlight,
    /// Where the calls' progress and the tools' own notifications go.
    peer: Option<Peer>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("version", &self.version)
            .field("initialized", &self.initialized)
            .field("in_flight", &self.inflight.len())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A fresh session of `server`. Must be used inside a tokio runtime (async
    /// and blocking tools are spawned on it).
    pub fn new(server: Server) -> Self {
        Self {
            server,
            version: None,
            initialized: false,
            ide_connected: false,
            inflight: InFlight::new(),
            peer: None,
        }
    }

    /// A session of `server` whose client negotiated `version` earlier: each
    /// POST of a 2025-11-25 HTTP session is served on one.
    pub(crate) fn resumed(server: Server, version: &'static str) -> Self {
        Self {
            version: Some(version),
            initialized: true,
            ..Self::new(server)
        }
    }

    /// Sends the calls' progress and the tools' own notifications to `peer`
    /// (the transport drains its receiver); without one they are dropped.
    pub fn set_peer(&mut self, peer: Peer) {
        self.peer = Some(peer);
    }

    /// The negotiated protocol version, once `initialize` was answered.
    pub fn protocol_version(&self) -> Option<&'static str> {
        self.version
    }

    /// Whether the client sent `notifications/initialized` (from then on it
    /// receives server notifications).
    pub fn is_initialized(&self) -> bool {
        self.initialized
    }

    /// Whether the client sent the IDE protocol's `ide_connected`
    /// notification (the `claude` CLI does, right after
    /// `notifications/initialized`).
    pub fn is_ide_connected(&self) -> bool {
        self.ide_connected
    }

    /// How many calls are running (spawned async tools and blocking tools).
    pub fn in_flight(&self) -> usize {
        self.inflight.len()
    }

    /// Handles one incoming message. Appends its response to `out` and returns
    /// `true`, or returns `false` when there is nothing to send now (a
    /// notification, or a call that completes later).
    pub fn handle(&mut self, message: &[u8], out: &mut Vec<u8>) -> bool {
        self.handle_with(message, None, out)
    }

    /// Handles one incoming message like [`handle`](Self::handle); a call it
    /// starts reports to `peer` when given, instead of the session's peer.
    pub(crate) fn handle_with(
        &mut self,
        message: &[u8],
        peer: Option<&Peer>,
        out: &mut Vec<u8>,
    ) -> bool {
        match request::parse(message) {
            Ok(Parsed::Request(request)) => {
                let peer = peer.map(|peer| PeerRef::Given(Some(peer)));
                self.request(&request, peer, out)
            }
            Ok(Parsed::Other(Message::Notification { method, params })) => {
                self.notification(&method, params);
                false
            }
            Ok(Parsed::Other(_)) => {
                tracing::debug!("ignored a response: this server sends no requests");
                false
            }
            Err(rejection) => {
                tracing::debug!(code = rejection.code, message = %rejection.message, "rejected a message");
                jsonrpc::write_error(out, rejection.id, rejection.code, &rejection.message);
                true
            }
        }
    }

    /// Serves one request whose envelope (and, for `tools/call`, params) a
    /// transport already read; see [`handle`](Self::handle).
    pub(crate) fn handle_request(
        &mut self,
        request: &Request<'_>,
        peer: PeerRef<'_>,
        out: &mut Vec<u8>,
    ) -> bool {
        self.request(request, Some(peer), out)
    }

    /// Answers one running call with an error saying it was cancelled because
    /// of `reason`, and aborts it; `false` when none is running. Called until
    /// `false` when a connection ends with calls still running, so that every
    /// request is answered.
    pub fn cancel_next(&mut self, out: &mut Vec<u8>, reason: crate::CancelReason) -> bool {
        self.inflight.cancel_next(out, reason)
    }

    /// Waits for a running call to finish and appends its response to `out`.
    /// Cancel-safe.
    pub async fn complete(&mut self, out: &mut Vec<u8>) {
        if !self.inflight.complete(out).await {
            std::future::pending::<()>().await;
        }
    }

    /// Appends the response of a call that already finished; `false` if none has.
    pub fn try_complete(&mut self, out: &mut Vec<u8>) -> bool {
        self.inflight.try_complete(out)
    }

    fn request(
        &mut self,
        request: &Request<'_>,
        peer: Option<PeerRef<'_>>,
        out: &mut Vec<u8>,
    ) -> bool {
        let (id, method) = (request.id, &*request.method);
        let span = tracing::debug_span!("request", method, %id, tool = tracing::field::Empty);
        let _entered = span.enter();
        let started = tracing::enabled!(tracing::Level::DEBUG).then(Instant::now);
        let era = match &request.era {
            Ok(era) => *era,
            Err(why) if method != "initialize" => {
                era::write_unsupported(out, id, why);
                return true;
            }
            Err(_) => Era::Handshake,
        };
        let stateless = era.is_stateless();
        let answered = if !stateless && self.version.is_none() && needs_init(method) {
            jsonrpc::write_error(
                out,
                Some(id),
                INVALID_REQUEST,
                &format_args!(
                    "`{method}` before `initialize`: the session is not initialized yet, send `initialize` first"
                ),
            );
            true
        } else {
            self.route(request, peer, &span, stateless, out)
        };
        if let (Some(started), true) = (started, answered) {
            tracing::debug!(elapsed_us = started.elapsed().as_micros(), "request done");
        }
        answered
    }

    /// Answers `request` by its method; `true` when answered now.
    fn route(
        &mut self,
        request: &Request<'_>,
        peer: Option<PeerRef<'_>>,
        span: &tracing::Span,
        stateless: bool,
        out: &mut Vec<u8>,
    ) -> bool {
        let (id, method, params) = (request.id, &*request.method, request.params());
        match method {
            "initialize" => self.initialize(id, params, out),
            "server/discover" => {
                era::write_discover(out, id, &self.server);
                true
            }
            "ping" if stateless => {
                jsonrpc::write_result(out, id, era::EMPTY_COMPLETE);
                true
            }
            "ping" => {
                jsonrpc::write_result(out, id, b"{}");
                true
            }
            "tools/list" => {
                self.list(id, stateless, out);
                true
            }
            "tools/call" => self.call(id, request.call(), peer, span, stateless, out),
            "resources/list"
            | "resources/templates/list"
            | "resources/read"
            | "prompts/list"
            | "prompts/get" => self.item(request, peer, stateless, out),
            _ => Self::unknown(id, method, out),
        }
    }

    /// A resource or prompt method: forwarded when a relay serves them,
    /// else answered from the registry, or unknown when it registers none
    /// of that kind (and so advertises none); `true` when answered now.
    fn item(
        &mut self,
        request: &Request<'_>,
        peer: Option<PeerRef<'_>>,
        stateless: bool,
        out: &mut Vec<u8>,
    ) -> bool {
        let (id, method, params) = (request.id, &*request.method, request.params());
        if self.server.relay().is_some() {
            return self.forward(id, method, params, peer, stateless, out);
        }
        let registry = self.server.registry();
        let served = if method.starts_with("resources/") {
            registry.has_resources()
        } else {
            !registry.prompts().is_empty()
        };
        if !served {
            return Self::unknown(id, method, out);
        }
        let (ask, inflight) = self.ask(id, peer, stateless);
        match method {
            "resources/list" => items::list_resources(&ask, out),
            "resources/templates/list" => items::list_templates(&ask, out),
            "prompts/list" => items::list_prompts(&ask, out),
            "resources/read" => return items::read_resource(&ask, params, inflight, out),
            _ => return items::get_prompt(&ask, params, inflight, out),
        }
        true
    }

    fn initialize(
        &mut self,
        id: RequestId<'_>,
        params: Option<&RawValue>,
        out: &mut Vec<u8>,
    ) -> bool {
        #[derive(Deserialize)]
        struct Params<'a> {
            #[serde(borrow, rename = "protocolVersion")]
            protocol_version: Option<Cow<'a, str>>,
        }
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Initialized<'a> {
            protocol_version: &'a str,
            capabilities: era::Capabilities,
            server_info: era::Info<'a>,
            #[serde(skip_serializing_if = "Option::is_none")]
            instructions: Option<&'a str>,
        }

        if self.version.is_some() {
            jsonrpc::write_error(
                out,
                Some(id),
                INVALID_REQUEST,
                &"`initialize` was already called on this connection",
            );
            return true;
        }
        let asked = match params
            .map(|p| serde_json::from_str::<Params<'_>>(p.get()))
            .transpose()
        {
            Ok(params) => params.and_then(|p| p.protocol_version),
            Err(err) => {
                jsonrpc::write_error(
                    out,
                    Some(id),
                    INVALID_PARAMS,
                    &format_args!(
                        "invalid `initialize` params: {}",
                        crate::decode::without_position(&err)
                    ),
                );
                return true;
            }
        };
        let version = PROTOCOL_VERSIONS
            .iter()
            .find(|v| asked.as_deref() == Some(**v))
            .copied()
            .unwrap_or(PROTOCOL_VERSIONS[0]);
        tracing::info!(asked = asked.as_deref(), version, "client initialized");
        self.version = Some(version);
        jsonrpc::write_result_open(out, id);
        let result = Initialized {
            protocol_version: version,
            capabilities: era::Capabilities::of(&self.server),
            server_info: era::Info::of(&self.server),
            instructions: self.server.instructions(),
        };
        serde_json::to_writer(&mut *out, &result).expect("strings serialize");
        out.push(jsonrpc::RESULT_CLOSE);
        true
    }

    fn list(&self, id: RequestId<'_>, stateless: bool, out: &mut Vec<u8>) {
        let relayed = self.server.relay().map(|relay| relay.list_result());
        let (list, cache) = match &relayed {
            Some(list) => (&**list, era::ListCache::Relayed),
            None => (
                self.server.registry().list_result_bytes(),
                era::ListCache::Registry,
            ),
        };
        if list.first() != Some(&b'{') {
            tracing::error!("the relay's tool list is not a JSON object");
            jsonrpc::write_error(
                out,
                Some(id),
                jsonrpc::INTERNAL_ERROR,
                &"the tool list is not available: the relay's list is not a JSON object",
            );
        } else if stateless {
            era::write_list(out, id, list, cache);
        } else {
            jsonrpc::write_result(out, id, list);
        }
    }

    fn call(
        &mut self,
        id: RequestId<'_>,
        params: Result<&CallParams<'_>, &str>,
        peer: Option<PeerRef<'_>>,
        span: &tracing::Span,
        stateless: bool,
        out: &mut Vec<u8>,
    ) -> bool {
        let params = match params {
            Ok(params) => params,
            Err(why) => {
                jsonrpc::write_error(out, Some(id), INVALID_PARAMS, &why);
                return true;
            }
        };
        let call = Self::call_of(&self.server, self.peer.as_ref(), peer)
            .with_progress_token(params.meta.as_ref().and_then(|meta| meta.progress_token));
        if let Some(relay) = self.server.relay() {
            span.record("tool", &*params.name);
            return dispatch::relay(
                call,
                &mut self.inflight,
                id,
                &**relay,
                params,
                stateless,
                out,
            );
        }
        let Some(tool) = self.server.registry().get(&params.name) else {
            jsonrpc::write_error(
                out,
                Some(id),
                INVALID_PARAMS,
                &format_args!("unknown tool `{}`", jsonrpc::clip(&params.name)),
            );
            return true;
        };
        span.record("tool", tool.def.name);
        dispatch::call(
            call,
            &mut self.inflight,
            id,
            dispatch::Handler::tool(tool.def),
            params.arguments,
            stateless,
            out,
        )
    }

    /// Hands a resources or prompts request to the relay; -32601 when it
    /// does not forward it.
    fn forward(
        &mut self,
        id: RequestId<'_>,
        method: &str,
        params: Option<&RawValue>,
        peer: Option<PeerRef<'_>>,
        stateless: bool,
        out: &mut Vec<u8>,
    ) -> bool {
        let relay = self.server.relay().expect("routed here with a relay");
        let call = Self::call_of(&self.server, self.peer.as_ref(), peer);
        let started = dispatch::relay_with(
            call,
            &mut self.inflight,
            id,
            method,
            stateless,
            out,
            |call| relay.forward(call, method, params.map(RawValue::get)),
        );
        started.unwrap_or_else(|| Self::unknown(id, method, out))
    }

    fn unknown(id: RequestId<'_>, method: &str, out: &mut Vec<u8>) -> bool {
        jsonrpc::write_error(
            out,
            Some(id),
            METHOD_NOT_FOUND,
            &format_args!("unknown method `{}`", jsonrpc::clip(method)),
        );
        true
    }

    /// What a request runs with: the server's states, its notifier and the
    /// client (`peer`, else the session's own).
    fn call_of<'a>(
        server: &'a Server,
        own: Option<&'a Peer>,
        peer: Option<PeerRef<'a>>,
    ) -> Call<'a> {
        Call::new(server.context())
            .with_notifier(server.notifier())
            .with_peer_ref(peer.unwrap_or(PeerRef::Given(own)))
    }

    /// A resources or prompts request, as [`items`] serves it, and where
    /// its answer may wait.
    fn ask<'a>(
        &'a mut self,
        id: RequestId<'a>,
        peer: Option<PeerRef<'a>>,
        stateless: bool,
    ) -> (items::Ask<'a, 'a>, &'a mut InFlight) {
        let ask = items::Ask {
            registry: self.server.registry(),
            call: Self::call_of(&self.server, self.peer.as_ref(), peer),
            id,
            stateless,
        };
        (ask, &mut self.inflight)
    }

    fn notification(&mut self, method: &str, params: Option<&RawValue>) {
        match method {
            "notifications/initialized" => self.initialized = self.version.is_some(),
            "notifications/cancelled" => match cancelled_request(params) {
                Some(id) => {
                    if !self.inflight.cancel(id) {
                        tracing::debug!(id, "cancellation of a request not in flight");
                    }
                }
                None => {
                    tracing::debug!("`notifications/cancelled` without a `requestId`; ignored");
                }
            },
            // The CLI's pid: no use here, but the connection replays the
            // latest states (the selection) at this point.
            "ide_connected" => self.ide_connected = true,
            // Any other notification: accepted silently.
            _ => tracing::debug!(method, "notification ignored"),
        }
    }
}

/// Whether a session serves `method` only once it is initialized (a
/// stateless request needs no session).
fn needs_init(method: &str) -> bool {
    matches!(
        method,
        "tools/list"
            | "tools/call"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
            | "prompts/list"
            | "prompts/get"
    )
}
