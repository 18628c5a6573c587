//! Answering one HTTP request: the gate, the body, then a 2026-07-28
//! exchange or a message of a 2025-11-25 session.

use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderValue};
use hyper::{Method, Request, StatusCode};

use super::http::{ENDPOINT, SESSION_HEADER, Shared};
use super::http_check::{
    Gate, HttpResponse, empty, is_error, json_response, method_not_allowed, overloaded, refusal,
    refuse_accept, refuse_content_type,
};
use super::http_session::{Missing, SESSION_QUEUE};
use super::http_stateless::{exchange, header_mismatch};
use crate::jsonrpc::{self, INTERNAL_ERROR, INVALID_REQUEST, Message};

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

pub(crate) async fn handle(shared: &Shared, request: Request<Incoming>) -> HttpResponse {
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
    let gate = Gate {
        token: &shared.token,
        port: shared.port,
        loopback: shared.loopback,
        extra_origins: &shared.options.allowed_origins,
    };
    if let Some(refused) = gate.refusal(request.headers()) {
        return refused;
    }
    match *request.method() {
        Method::POST => {}
        Method::DELETE if request.headers().contains_key(SESSION_HEADER) => {
            return delete(shared, request.headers());
        }
        ref other => return method_not_allowed(other),
    }
    if let Some(refused) =
        refuse_content_type(request.headers()).or_else(|| refuse_accept(request.headers()))
    {
        return refused;
    }
    let Ok(_permit) = shared.in_flight.try_acquire() else {
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
    let (parts, body) = request.into_parts();
    let body = match read_body(body, shared.options.max_body_bytes).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    post(shared, &parts.headers, body).await
}

async fn read_body(body: Incoming, limit: usize) -> Result<Bytes, HttpResponse> {
    let too_large = || {
        refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            INVALID_REQUEST,
            &format_args!("the body is larger than the limit of {limit} bytes"),
        )
    };
    if hyper::body::Body::size_hint(&body).lower() > limit as u64 {
        return Err(too_large());
    }
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(err) if err.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Err(err) => Err(refusal(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            &format_args!("the body could not be read: {err}"),
        )),
    }
}

async fn post(shared: &Shared, headers: &HeaderMap, body: Bytes) -> HttpResponse {
    let message = match jsonrpc::parse(&body) {
        Ok(message) => message,
        Err(rejection) => {
            let mut out = Vec::with_capacity(128);
            jsonrpc::write_error(&mut out, rejection.id, rejection.code, &rejection.message);
            return json_response(StatusCode::BAD_REQUEST, out);
        }
    };
    let session = headers.get(SESSION_HEADER).map(HeaderValue::to_str);
    match (message, session) {
        (_, Some(Err(_))) => refusal(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            &"the Mcp-Session-Id header is not visible ASCII",
        ),
        (Message::Request { id, .. }, Some(Ok(session))) => {
            let id = id.as_json().to_owned();
            in_session(shared, session, body, Some(&id)).await
        }
        (_, Some(Ok(session))) => in_session(shared, session, body, None).await,
        (Message::Request { ref method, .. }, None) if method == "initialize" => {
            open_session(shared, body).await
        }
        (Message::Request { id, method, params }, None) => {
            if let Some(refused) = header_mismatch(headers, id, &method, params) {
                return refused;
            }
            let id = id.as_json().to_owned();
            exchange(&shared.server, &body, &id).await
        }
        // Notifications and responses outside a session: nothing to act on
        // (cancellation is closing the POST of the call).
        (_, None) => accepted(),
    }
}

fn accepted() -> HttpResponse {
    empty(StatusCode::ACCEPTED)
}

async fn open_session(shared: &Shared, body: Bytes) -> HttpResponse {
    let session = match shared.sessions.open(&shared.server) {
        Ok(Some(session)) => session,
        Ok(None) => {
            tracing::warn!("HTTP session refused: too many sessions");
            return overloaded(
                "tooManySessions",
                shared.options.max_sessions,
                &format_args!(
                    "too many open sessions ({}); end one with DELETE, or send 2026-07-28 requests, which need none",
                    shared.options.max_sessions
                ),
            );
        }
        Err(err) => {
            return refusal(StatusCode::INTERNAL_SERVER_ERROR, INTERNAL_ERROR, &err);
        }
    };
    let id = match jsonrpc::parse(&body) {
        Ok(Message::Request { id, .. }) => id.as_json().to_owned(),
        _ => unreachable!("checked by the caller"),
    };
    match answer_in_session(shared, &session, body, Some(&id)).await {
        Ok(reply) if !is_error(&reply, &id) => {
            let mut response = json_response(StatusCode::OK, reply);
            response.headers_mut().insert(
                SESSION_HEADER,
                HeaderValue::from_str(&session).expect("a UUID is a header value"),
            );
            response
        }
        // A failed `initialize` opens nothing.
        Ok(reply) => {
            shared.sessions.end(&session);
            json_response(StatusCode::OK, reply)
        }
        Err(refused) => {
            shared.sessions.end(&session);
            refused
        }
    }
}

/// Cancels the call of a POST dropped before its answer (the client closed
/// the connection): the session gets `notifications/cancelled` for it.
struct CancelOnDrop<'a> {
    shared: &'a Shared,
    session: &'a str,
    id: Option<&'a str>,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id else { return };
        let cancel = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id},"reason":"the HTTP request was closed"}}}}"#
        );
        let _ = self
            .shared
            .sessions
            .post(self.session, Bytes::from(cancel), None);
        self.shared.sessions.answered(self.session);
    }
}

async fn in_session(shared: &Shared, session: &str, body: Bytes, id: Option<&str>) -> HttpResponse {
    match answer_in_session(shared, session, body, id).await {
        Ok(reply) if reply.is_empty() => accepted(),
        Ok(reply) => json_response(StatusCode::OK, reply),
        Err(refused) => refused,
    }
}

/// Hands a message to a session and waits for its answer (empty for a
/// notification or a response, which get none).
async fn answer_in_session(
    shared: &Shared,
    session: &str,
    body: Bytes,
    id: Option<&str>,
) -> Result<Vec<u8>, HttpResponse> {
    let answer = match shared.sessions.post(session, body, id) {
        Ok(answer) => answer,
        Err(Missing::Unknown) => {
            return Err(refusal(
                StatusCode::NOT_FOUND,
                INVALID_REQUEST,
                &"no such session: it ended (DELETE, or idle too long) or never was; send `initialize` again",
            ));
        }
        Err(Missing::Busy) => {
            return Err(overloaded(
                "sessionQueueFull",
                SESSION_QUEUE,
                &"this session has too many messages waiting; retry shortly",
            ));
        }
    };
    let Some(answer) = answer else {
        return Ok(Vec::new());
    };
    let mut guard = CancelOnDrop {
        shared,
        session,
        id,
    };
    let reply = answer.await;
    guard.id = None;
    shared.sessions.answered(session);
    reply.map_err(|_| {
        refusal(
            StatusCode::NOT_FOUND,
            INVALID_REQUEST,
            &"the session ended before answering (DELETE, or idle too long)",
        )
    })
}

fn delete(shared: &Shared, headers: &HeaderMap) -> HttpResponse {
    let session = headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if shared.sessions.end(session) {
        empty(StatusCode::NO_CONTENT)
    } else {
        refusal(
            StatusCode::NOT_FOUND,
            INVALID_REQUEST,
            &"no such session: it already ended or never was",
        )
    }
}
