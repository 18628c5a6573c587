//! Answering one HTTP request: the gate, the body, then a 2026-07-28
//! exchange or a message of a 2025-11-25 session. Either answers a call
//! that reports progress as an event stream ([`http_sse`](super::http_sse)).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Either, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Method, Request, StatusCode};
use tokio::sync::oneshot;

use super::http::{ENDPOINT, SESSION_HEADER, Shared};
use super::http_check::{
    Gate, Heads, HttpResponse, empty, is_error, json_response, method_not_allowed, overloaded,
    refusal, refuse_accept, refuse_content_type,
};
use super::http_session::{Missing, SESSION_QUEUE};
use super::http_sse::stream;
use super::http_stateless::{exchange, header_mismatch};
use crate::jsonrpc::{self, INTERNAL_ERROR, INVALID_REQUEST, Message, RequestId};
use crate::session::Request as McpRequest;

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
    let heads = Heads::read(&parts.headers);
    let gate = Gate {
        token: &shared.token,
        port: shared.port,
        loopback: shared.loopback,
        extra_origins: &shared.options.allowed_origins,
    };
    if let Some(refused) = gate.refusal(&heads) {
        return refused;
    }
    match parts.method {
        Method::POST => {}
        Method::DELETE if heads.session.first.is_some() => {
            return delete(shared, &heads);
        }
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

async fn post(shared: &Arc<Shared>, heads: &Heads<'_>, body: Bytes) -> HttpResponse {
    let (message, call) = match jsonrpc::parse_call(&body) {
        Ok(parsed) => parsed,
        Err(rejection) => {
            let mut out = Vec::with_capacity(128);
            jsonrpc::write_error(&mut out, rejection.id, rejection.code, &rejection.message);
            return json_response(StatusCode::BAD_REQUEST, out);
        }
    };
    let session = heads.session.first.map(HeaderValue::to_str);
    match (message, session) {
        (_, Some(Err(_))) => refusal(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            &"the Mcp-Session-Id header is not visible ASCII",
        ),
        (Message::Request { id, method, .. }, Some(Ok(session))) => {
            let id = id.as_json().to_owned();
            // Only a call reports progress and notifications of its own.
            let streams = method == "tools/call";
            request_in_session(shared, session, body, &id, streams).await
        }
        (_, Some(Ok(session))) => match shared.sessions.post(session, body) {
            Ok(()) => accepted(),
            Err(missing) => refuse_missing(&missing),
        },
        (Message::Request { id, method, .. }, None) if method == "initialize" => {
            let id = id.as_json().to_owned();
            open_session(shared, body, &id).await
        }
        (Message::Request { id, method, params }, None) => {
            let request = McpRequest::read(id, method, params, call);
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

async fn open_session(shared: &Arc<Shared>, body: Bytes, id: &str) -> HttpResponse {
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
    let reply = match shared.sessions.request(&session, body, id, false) {
        Ok(answer) => Pending::new(shared, &session, id)
            .wait(answer.response)
            .await
            .ok_or_else(ended),
        Err(missing) => Err(refuse_missing(&missing)),
    };
    match reply {
        Ok(reply) if !is_error(&reply, id) => {
            let mut response = json_response(StatusCode::OK, reply);
            response.headers_mut().insert(
                SESSION,
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

/// A POST of a session waiting for the answer to its request. Dropped before
/// the answer (the client closed the connection, or the stream of the
/// answer), it cancels the call: the session gets `notifications/cancelled`
/// for it.
struct Pending {
    shared: Arc<Shared>,
    session: Box<str>,
    /// The request's id (JSON text).
    id: Box<str>,
    answered: bool,
}

impl Pending {
    fn new(shared: &Arc<Shared>, session: &str, id: &str) -> Self {
        Self {
            shared: Arc::clone(shared),
            session: session.into(),
            id: id.into(),
            answered: false,
        }
    }

    /// The response; `None` when the session ended before answering.
    async fn wait(mut self, response: oneshot::Receiver<Vec<u8>>) -> Option<Vec<u8>> {
        let response = response.await.ok();
        self.answered = true;
        response
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.answered {
            let cancel = format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{},"reason":"the HTTP request was closed"}}}}"#,
                self.id
            );
            let _ = self
                .shared
                .sessions
                .post(&self.session, Bytes::from(cancel));
        }
        self.shared.sessions.answered(&self.session);
    }
}

/// Serves request `id` of a session: 200 with the response as JSON, or, when
/// the call sends progress or notifications before it, as an event stream
/// ([`http_sse`](super::http_sse)) that ends with the response.
async fn request_in_session(
    shared: &Arc<Shared>,
    session: &str,
    body: Bytes,
    id: &str,
    streams: bool,
) -> HttpResponse {
    let answer = match shared.sessions.request(session, body, id, streams) {
        Ok(answer) => answer,
        Err(missing) => return refuse_missing(&missing),
    };
    let response = Pending::new(shared, session, id).wait(answer.response);
    let Some(mut notes) = answer.notes else {
        return json_reply(response.await);
    };
    let mut response = Box::pin(response);
    tokio::select! {
        biased;
        Some(first) = notes.recv() => {
            let id = id.to_owned();
            let response = Box::pin(async move {
                response.await.unwrap_or_else(|| ended_in_stream(&id))
            });
            stream(notes, &first, response)
        }
        reply = &mut response => match (reply, notes.try_recv()) {
            // Notifications sent just before the response: streamed too.
            (Some(reply), Ok(first)) => stream(notes, &first, Box::pin(std::future::ready(reply))),
            (reply, _) => json_reply(reply),
        },
    }
}

fn json_reply(reply: Option<Vec<u8>>) -> HttpResponse {
    match reply {
        Some(reply) => json_response(StatusCode::OK, reply),
        None => ended(),
    }
}

const ENDED: &str = "the session ended before answering (DELETE, or idle too long)";

/// 404: the session ended before answering.
fn ended() -> HttpResponse {
    refusal(StatusCode::NOT_FOUND, INVALID_REQUEST, &ENDED)
}

/// The last event of a stream whose session ended before answering request `id`.
fn ended_in_stream(id: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    jsonrpc::write_error(
        &mut out,
        Some(RequestId::from_json(id)),
        INVALID_REQUEST,
        &ENDED,
    );
    out
}

fn refuse_missing(missing: &Missing) -> HttpResponse {
    match missing {
        Missing::Unknown => refusal(
            StatusCode::NOT_FOUND,
            INVALID_REQUEST,
            &"no such session: it ended (DELETE, or idle too long) or never was; send `initialize` again",
        ),
        Missing::Busy => overloaded(
            "sessionQueueFull",
            SESSION_QUEUE,
            &"this session has too many messages waiting; retry shortly",
        ),
    }
}

fn delete(shared: &Shared, heads: &Heads<'_>) -> HttpResponse {
    let session = heads
        .session
        .first
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
