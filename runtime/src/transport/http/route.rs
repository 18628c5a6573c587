//! Answering one HTTP request: the gate, the body, then a 2026-07-28
//! exchange or a message of a 2025-11-25 session. Either answers a call
//! that reports progress as an event stream ([`sse`](super::sse)); a GET
//! of a session opens its own event stream.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Either, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Method, Request, StatusCode};

use super::check::{Heads, SESSION_HEADER, refuse_accept, refuse_content_type, refuse_gate};
use super::exchange::{exchange, header_mismatch, serve};
use super::response::{
    HttpResponse, duplicate, empty, json_response, method_not_allowed, overloaded, refusal,
};
use super::shared::Shared;
use super::sse::listen;
use crate::jsonrpc::{self, INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, Message};
use crate::peer::PeerRef;
use crate::request::{self, Parsed, Request as McpRequest, cancelled_request};
use crate::session::Session;

/// The one endpoint.
pub const ENDPOINT: &str = "/mcp";

/// [`SESSION_HEADER`], parsed once.
const SESSION: HeaderName = HeaderName::from_static(SESSION_HEADER);

/// Counts a request being answered for as long as it lives.
struct Exchange<'a>(&'a AtomicUsize);

impl<'a> Exchange<'a> {
    fn start(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::Relaxed);
        Self(count)
    }
}

impl Drop for Exchange<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

pub(crate) async fn handle(shared: &Arc<Shared>, request: Request<Incoming>) -> HttpResponse {
    let _exchange = Exchange::start(&shared.exchanges);
    if request.uri().path() != ENDPOINT {
        return refusal(
            StatusCode::NOT_FOUND,
            INVALID_REQUEST,
            &format_args!(
                "nothing is served at {}: the MCP endpoint is {ENDPOINT}",
                jsonrpc::clip(request.uri().path())
            ),
        );
    }
    let (parts, body) = request.into_parts();
    if let Some(refused) = refuse_gate(
        &parts.headers,
        &shared.token,
        shared.hosts,
        shared.options.credential,
        &shared.options.allowed_origins,
    ) {
        return refused;
    }
    let heads = Heads::read(&parts.headers);
    match parts.method {
        Method::POST => {}
        Method::DELETE if heads.session.first.is_some() => {
            return delete(shared, &heads);
        }
        Method::GET if heads.session.first.is_some() => return get(shared, &heads),
        ref other => return method_not_allowed(other),
    }
    if let Some(refused) = refuse_content_type(&heads).or_else(|| refuse_accept(&heads)) {
        return refused;
    }
    // Held until the answer is sent: an event stream's, until it ends.
    let Ok(permit) = Arc::clone(&shared.in_flight).try_acquire_owned() else {
        tracing::warn!("HTTP request refused: too many requests in flight");
        return overloaded(
            "tooManyRequestsInFlight",
            shared.options.max_in_flight,
            &format_args!(
                "too many requests in flight ({}); retry when some are answered",
                shared.options.max_in_flight
            ),
        );
    };
    let body = match read_body(body, shared.options.max_body_bytes).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let mut response = post(shared, &heads, body).await;
    if let Either::Right(stream) = response.body_mut() {
        stream.hold(permit);
    }
    response
}

async fn read_body(body: Incoming, limit: usize) -> Result<Bytes, HttpResponse> {
    let too_large = || {
        refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            INVALID_REQUEST,
            &format_args!("the body is larger than the limit of {limit} bytes"),
        )
    };
    let size = hyper::body::Body::size_hint(&body);
    if size.lower() > limit as u64 {
        return Err(too_large());
    }
    // A body of a known length (`Content-Length`, which hyper holds it to)
    // within the limit needs no counting.
    let collected = if size.exact().is_some() {
        body.collect().await.map_err(Into::into)
    } else {
        Limited::new(body, limit).collect().await
    };
    match collected {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(err) if err.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Err(err) => Err(refusal(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            &format_args!("the body could not be read: {err}"),
        )),
    }
}

async fn post(shared: &Arc<Shared>, heads: &Heads<'_>, body: Bytes) -> HttpResponse {
    let parsed = match request::parse(&body) {
        Ok(parsed) => parsed,
        Err(rejection) => {
            let mut out = Vec::with_capacity(128);
            jsonrpc::write_error(&mut out, rejection.id, rejection.code, &rejection.message);
            return json_response(StatusCode::BAD_REQUEST, out);
        }
    };
    if let Some(refused) = refuse_session(heads) {
        return refused;
    }
    let session = heads.session.first.and_then(|v| v.to_str().ok());
    match (parsed, session) {
        (Parsed::Request(request), Some(session)) => {
            let Some(ticket) = shared.sessions.begin(session) else {
                return unknown_session();
            };
            let resumed = Session::resumed(shared.server.clone(), ticket.version());
            serve(resumed, &request, Some(&ticket), |_, _| StatusCode::OK).await
        }
        // A notification or a response: it counts as the session's use.
        (Parsed::Other(message), Some(session)) => {
            let Some(ticket) = shared.sessions.begin(session) else {
                return unknown_session();
            };
            if let Message::Notification { method, params } = message
                && method == "notifications/cancelled"
                && let Some(request) = cancelled_request(params)
            {
                ticket.cancel(request);
            }
            accepted()
        }
        (Parsed::Request(request), None) if request.method == "initialize" => {
            open_session(shared, &request)
        }
        (Parsed::Request(McpRequest { id, method, .. }), None) if shared.options.sessions_only => {
            // `server/discover` included: the client falls back to `initialize`.
            let mut out = Vec::with_capacity(128);
            jsonrpc::write_error(
                &mut out,
                Some(id),
                METHOD_NOT_FOUND,
                &format_args!(
                    "`{}` outside a session: this server serves sessions only; send `initialize` first",
                    jsonrpc::clip(&method)
                ),
            );
            json_response(StatusCode::OK, out)
        }
        (Parsed::Request(request), None) => {
            if let Some(refused) = header_mismatch(heads, &request) {
                return refused;
            }
            exchange(&shared.server, &request).await
        }
        // Notifications and responses outside a session: nothing to act on
        // (cancellation is closing the POST of the call).
        (_, None) => accepted(),
    }
}

fn accepted() -> HttpResponse {
    empty(StatusCode::ACCEPTED)
}

/// Answers `initialize` on a fresh session; one that succeeds opens a
/// 2025-11-25 session at the version it negotiated, whose id goes back in
/// `Mcp-Session-Id`.
fn open_session(shared: &Arc<Shared>, request: &McpRequest<'_>) -> HttpResponse {
    let mut session = Session::new(shared.server.clone());
    let mut out = Vec::with_capacity(512);
    session.handle_request(request, PeerRef::Given(None), &mut out);
    // A failed `initialize` opens nothing.
    let Some(version) = session.protocol_version() else {
        return json_response(StatusCode::OK, out);
    };
    match shared.sessions.open(version) {
        Ok(Some(id)) => {
            let mut response = json_response(StatusCode::OK, out);
            response.headers_mut().insert(
                SESSION,
                HeaderValue::from_str(&id).expect("a UUID is a header value"),
            );
            response
        }
        Ok(None) => {
            tracing::warn!("HTTP session refused: too many sessions");
            overloaded(
                "tooManySessions",
                shared.options.max_sessions,
                &format_args!(
                    "too many open sessions ({}); end one with DELETE, or send 2026-07-28 requests, which need none",
                    shared.options.max_sessions
                ),
            )
        }
        Err(err) => refusal(StatusCode::INTERNAL_SERVER_ERROR, INTERNAL_ERROR, &err),
    }
}

fn unknown_session() -> HttpResponse {
    refusal(
        StatusCode::NOT_FOUND,
        INVALID_REQUEST,
        &"no such session: it ended (DELETE, or idle too long) or never was; send `initialize` again",
    )
}

/// 400 (the refusal) when `Mcp-Session-Id` comes twice (which session is
/// meant would be a guess) or is not visible ASCII.
fn refuse_session(heads: &Heads<'_>) -> Option<HttpResponse> {
    if heads.session.repeated {
        return Some(duplicate(StatusCode::BAD_REQUEST, "Mcp-Session-Id"));
    }
    let value = heads.session.first?;
    value.to_str().is_err().then(|| {
        refusal(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            &"the Mcp-Session-Id header is not visible ASCII",
        )
    })
}

/// Opens the event stream of the session `Mcp-Session-Id` names (a GET
/// without one is refused with 405: a 2026-07-28 client has no stream).
///
/// One stream per session: a second GET replaces the first, which ends.
/// The spec lets a server refuse it (the TypeScript SDK answers 409), but
/// a client whose connection dropped without the server seeing it yet
/// would then be locked out of its notifications for good; replacing
/// sends every notification on one stream all the same. No resumption:
/// `Last-Event-ID` is ignored.
fn get(shared: &Shared, heads: &Heads<'_>) -> HttpResponse {
    if let Some(refused) = refuse_session(heads) {
        return refused;
    }
    if heads.accepts.is_some_and(|(_, stream)| !stream) {
        return refusal(
            StatusCode::NOT_ACCEPTABLE,
            INVALID_REQUEST,
            &"a GET opens an event stream: its Accept header must list `text/event-stream`",
        );
    }
    let session = heads
        .session
        .first
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    match shared.sessions.listen(session) {
        Some(listening) => listen(shared.server.notifier(), listening),
        None => unknown_session(),
    }
}

fn delete(shared: &Shared, heads: &Heads<'_>) -> HttpResponse {
    if let Some(refused) = refuse_session(heads) {
        return refused;
    }
    let session = heads
        .session
        .first
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if shared.sessions.end(session) {
        // 200 with an empty body, as the TypeScript SDK answers: the
        // Copilot CLI's fetch over its Unix socket builds a `Response`
        // with a body for every answer, which throws for a 204 (the CLI
        // shows the error in its terminal).
        empty(StatusCode::OK)
    } else {
        refusal(
            StatusCode::NOT_FOUND,
            INVALID_REQUEST,
            &"no such session: it already ended or never was",
        )
    }
}

#[cfg(test)]
mod tests {
    use hyper::header::{HeaderMap, HeaderValue};

    use super::*;
    use crate::transport::http::response::tests::{error_body, parts};

    #[test]
    fn a_session_named_twice_is_refused() {
        let id = HeaderValue::from_static("0f6a");
        let mut map = HeaderMap::new();
        assert!(refuse_session(&Heads::read(&map)).is_none());
        map.append(SESSION, id.clone());
        assert!(refuse_session(&Heads::read(&map)).is_none());
        let twice = Some((400, None, error_body("duplicate `Mcp-Session-Id` header")));
        map.append(SESSION, HeaderValue::from_static("other"));
        assert_eq!(refuse_session(&Heads::read(&map)).map(parts), twice);
        let mut map = HeaderMap::new();
        map.append(SESSION, id.clone());
        map.append(SESSION, id);
        assert_eq!(refuse_session(&Heads::read(&map)).map(parts), twice);
        let mut map = HeaderMap::new();
        map.append(SESSION, HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap());
        assert_eq!(
            refuse_session(&Heads::read(&map)).map(parts),
            Some((
                400,
                None,
                error_body("the Mcp-Session-Id header is not visible ASCII")
            ))
        );
    }
}
