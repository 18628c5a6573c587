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
use crate::era::{self, Era};
use crate::extract::Call;
use crate::jsonrpc::{self, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, Message, RequestId};
use crate::peer::{Peer, PeerRef};
use crate::server::Server;
use crate::tool::Arguments;

/// The handshake-era MCP protocol versions this server negotiates in
/// `initialize`, newest first. A client asking for another version is answered
/// with the newest. The stateless versions are
/// [`STATELESS_VERSIONS`](crate::era::STATELESS_VERSIONS).
pub const PROTOCOL_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

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
        match jsonrpc::parse_call(message) {
            Ok((Message::Request { id, method, params }, call)) => {
                let peer = peer.map(|peer| PeerRef::Given(Some(peer)));
                self.request(&Request::read(id, method, params, call), peer, out)
            }
            Ok((Message::Notification { method, params }, _)) => {
                self.notification(&method, params);
                false
            }
            Ok((Message::Response, _)) => {
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
        let (id, method, params) = (request.id, &*request.method, request.params);
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
        let needs_init = matches!(method, "tools/list" | "tools/call") && !stateless;
        let answered = if needs_init && self.version.is_none() {
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
                "tools/call" => self.call(id, request.call(), peer, &span, stateless, out),
                _ => {
                    jsonrpc::write_error(
                        out,
                        Some(id),
                        METHOD_NOT_FOUND,
                        &format_args!("unknown method `{}`", jsonrpc::clip(method)),
                    );
                    true
                }
            }
        };
        if let (Some(started), true) = (started, answered) {
            tracing::debug!(elapsed_us = started.elapsed().as_micros(), "request done");
        }
        answered
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
                        crate::args::without_position(&err)
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
        let call = Call::new(self.server.context())
            .with_notifier(self.server.notifier())
            .with_peer_ref(peer.unwrap_or(PeerRef::Given(self.peer.as_ref())))
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
            tool,
            params.arguments,
            stateless,
            out,
        )
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

/// The `requestId` (JSON text) that `notifications/cancelled`'s params
/// name, if they name one.
pub(crate) fn cancelled_request(params: Option<&RawValue>) -> Option<&str> {
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(borrow, rename = "requestId")]
        request_id: &'a RawValue,
    }
    let params: Params<'_> = serde_json::from_str(params?.get()).ok()?;
    Some(params.request_id.get())
}

/// One request as a session serves it: the envelope's parts, the era, and
/// for `tools/call` its params, each read once. A transport that must look
/// at the era or the tool before serving (HTTP's header check) reads the
/// same `Request` the session then serves.
pub(crate) struct Request<'a> {
    pub(crate) id: RequestId<'a>,
    pub(crate) method: Cow<'a, str>,
    pub(crate) params: Option<&'a RawValue>,
    /// The era its `_meta` names, or why it names none this server speaks.
    pub(crate) era: Result<Era, era::Unsupported<'a>>,
    /// `tools/call`'s params, or what is wrong with them; `None` for other methods.
    call: Option<Result<CallParams<'a>, String>>,
}

impl<'a> Request<'a> {
    /// The request of a parsed message: `call` is a `tools/call`'s params
    /// when [`jsonrpc::parse_call`] read them with the envelope. Otherwise
    /// what the session needs is read from `params`: one pass over a
    /// `tools/call`'s params for its tool, arguments, progress token and
    /// version; `_meta`'s version alone for other methods.
    pub(crate) fn read(
        id: RequestId<'a>,
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
        call: Option<CallParams<'a>>,
    ) -> Self {
        let call = match call {
            Some(call) => Some(Ok(call)),
            None => (method == "tools/call").then(|| CallParams::read(params)),
        };
        let era = match &call {
            Some(Ok(call)) => era::era_of_version(call.meta.as_ref().and_then(|m| m.version)),
            // Invalid params: the era still decides which error comes first.
            _ => era::era_of(params),
        };
        Self {
            id,
            method,
            params,
            era,
            call,
        }
    }

    /// The params of a `tools/call`, or the message saying why they are invalid.
    pub(crate) fn call(&self) -> Result<&CallParams<'a>, &str> {
        match &self.call {
            Some(Ok(call)) => Ok(call),
            Some(Err(why)) => Err(why),
            None => Err("not a `tools/call`"),
        }
    }
}

/// The params of a `tools/call`. Unknown members (`claudecode/toolUseId`,
/// …) are ignored.
#[derive(Deserialize)]
pub(crate) struct CallParams<'a> {
    /// The params' JSON text, as the client wrote it (for a relay).
    #[serde(skip)]
    pub(crate) json: &'a str,
    #[serde(borrow)]
    pub(crate) name: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "arguments")]
    pub(crate) arguments: Option<Arguments<'a>>,
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<CallMeta<'a>>,
}

/// `arguments` as serde reads them: `null` is none.
fn arguments<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Arguments<'de>>, D::Error> {
    let raw = Option::<&'de RawValue>::deserialize(deserializer)?;
    Ok(raw.map(Arguments::from))
}

#[derive(Deserialize)]
struct CallMeta<'a> {
    #[serde(borrow, default, rename = "progressToken")]
    progress_token: Option<&'a RawValue>,
    /// As raw JSON: `null` stays visible (not a string), not read as no version.
    #[serde(
        borrow,
        default,
        rename = "io.modelcontextprotocol/protocolVersion",
        deserialize_with = "jsonrpc::present_text"
    )]
    version: Option<&'a str>,
}

impl<'a> CallParams<'a> {
    /// The params of a call of tool `name`; `version` is the raw JSON of
    /// `_meta`'s protocol version.
    pub(crate) fn new(
        json: &'a str,
        name: Cow<'a, str>,
        arguments: Option<Arguments<'a>>,
        progress_token: Option<&'a RawValue>,
        version: Option<&'a str>,
    ) -> Self {
        let meta = (progress_token.is_some() || version.is_some()).then_some(CallMeta {
            progress_token,
            version,
        });
        Self {
            json,
            name,
            arguments,
            meta,
        }
    }

    /// The call's progress token and `_meta` protocol version, as raw JSON.
    pub(crate) fn meta_json(&self) -> (Option<&str>, Option<&str>) {
        let meta = self.meta.as_ref();
        (
            meta.and_then(|m| m.progress_token).map(RawValue::get),
            meta.and_then(|m| m.version),
        )
    }

    /// Reads a `tools/call`'s params, or says why they are invalid.
    pub(crate) fn read(params: Option<&'a RawValue>) -> Result<Self, String> {
        let Some(params) = params else {
            return Err("`tools/call` needs params with the tool's `name`".to_owned());
        };
        // serde would also read a struct from an array (`["name", {…}]`);
        // MCP's `tools/call` params are an object, so say so instead.
        if !params.get().starts_with('{') {
            return Err("`tools/call` params must be an object with the tool's `name`".to_owned());
        }
        let mut call: Self = serde_json::from_str(params.get()).map_err(|err| {
            format!(
                "invalid `tools/call` params: {}",
                crate::args::without_position(&err)
            )
        })?;
        call.json = params.get();
        Ok(call)
    }
}
