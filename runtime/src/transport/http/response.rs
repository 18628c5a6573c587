//! The bottom of the HTTP transport: its responses (a whole JSON body, or a
//! request-scoped event stream), the refusals, each a complete response
//! with a JSON-RPC error body that says why (clients show that message; the
//! official Python SDK reports -32603 for a refusal without one), and the
//! HTTP status of a JSON-RPC answer.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body, Frame};
use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio::task::AbortHandle;

use crate::jsonrpc::{self, INVALID_REQUEST};

/// The body of this transport's answers: whole, or a request-scoped event
/// stream.
pub(crate) type HttpBody = http_body_util::Either<Full<Bytes>, SseBody>;

/// The HTTP response of this transport.
pub(crate) type HttpResponse = Response<HttpBody>;

/// A response without a body.
pub(crate) fn empty(status: StatusCode) -> HttpResponse {
    let mut response = Response::new(HttpBody::Left(Full::new(Bytes::new())));
    *response.status_mut() = status;
    response
}

/// The body of an event-stream answer.
pub(crate) struct SseBody {
    rx: mpsc::Receiver<Bytes>,
    task: AbortHandle,
    /// The request's place among those in flight, given back when the
    /// stream ends (see [`hold`](Self::hold)).
    permit: Option<OwnedSemaphorePermit>,
}

impl SseBody {
    /// The body of a stream whose events arrive on `rx`, written by `task`
    /// (aborted when the body is dropped).
    pub(super) fn new(rx: mpsc::Receiver<Bytes>, task: AbortHandle) -> Self {
        Self {
            rx,
            task,
            permit: None,
        }
    }

    /// Keeps the request's in-flight permit until the stream ends: a call
    /// that streams is in flight for as long as it runs.
    pub(crate) fn hold(&mut self, permit: OwnedSemaphorePermit) {
        self.permit = Some(permit);
    }
}

impl Drop for SseBody {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Body for SseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.get_mut()
            .rx
            .poll_recv(cx)
            .map(|event| event.map(|bytes| Ok(Frame::data(bytes))))
    }
}

/// A complete refusal: `status`, a JSON-RPC error `code` and `message` with
/// id `null`.
pub(crate) fn refusal(
    status: StatusCode,
    code: i32,
    message: &dyn std::fmt::Display,
) -> HttpResponse {
    let mut body = Vec::with_capacity(128);
    jsonrpc::write_error(&mut body, None, code, message);
    json_response(status, body)
}

/// 503 with `Retry-After: 1` and -32030 (server overloaded): nothing was
/// done; `data` says which bound was hit, `{"reason": …, "limit": …}`.
pub(crate) fn overloaded(
    reason: &str,
    limit: usize,
    message: &dyn std::fmt::Display,
) -> HttpResponse {
    let mut body = Vec::with_capacity(160);
    let data = format!(r#"{{"reason":"{reason}","limit":{limit}}}"#);
    jsonrpc::write_error_with_data(&mut body, None, jsonrpc::SERVER_OVERLOADED, message, &data);
    let mut response = json_response(StatusCode::SERVICE_UNAVAILABLE, body);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// A JSON response.
pub(crate) fn json_response(status: StatusCode, body: Vec<u8>) -> HttpResponse {
    let mut response = Response::new(HttpBody::Left(Full::new(Bytes::from(body))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// 405 for any method but POST (and DELETE of a session), with `Allow`.
pub(crate) fn method_not_allowed(method: &hyper::Method) -> HttpResponse {
    let mut response = refusal(
        StatusCode::METHOD_NOT_ALLOWED,
        INVALID_REQUEST,
        &format_args!(
            "{method} is not served: send each JSON-RPC message as a POST (DELETE ends a 2025-11-25 session given by `Mcp-Session-Id`)"
        ),
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST, DELETE"));
    response
}

/// The refusal of a request that carries header `name` more than once:
/// `status` is that of the header's own check.
pub(crate) fn duplicate(status: StatusCode, name: &str) -> HttpResponse {
    tracing::warn!(header = name, "HTTP request refused: duplicate header");
    refusal(
        status,
        INVALID_REQUEST,
        &format_args!("duplicate `{name}` header"),
    )
}

/// The code of an error response this runtime wrote for request `id`.
fn error_code(response: &[u8], id: &str) -> Option<i32> {
    const PREFIX: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    const ERROR: &[u8] = br#","error":{"code":"#;
    let rest = response.get(PREFIX.len() + id.len()..)?;
    let code = rest.strip_prefix(ERROR)?;
    let end = code
        .iter()
        .position(|b| !(b.is_ascii_digit() || *b == b'-'))
        .unwrap_or(code.len());
    std::str::from_utf8(&code[..end]).ok()?.parse().ok()
}

/// The HTTP status of a JSON-RPC answer: 400 for a request that cannot be
/// served as sent, 404 for an unknown method, else 200 (as the official SDKs
/// map them for 2026-07-28 requests).
pub(crate) fn status_of(response: &[u8], id: &str) -> StatusCode {
    match error_code(response, id) {
        Some(jsonrpc::METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        Some(-32700 | -32600 | -32602 | -32020 | -32021 | -32022) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A refusal's status, `WWW-Authenticate` and body.
    pub(crate) fn parts(response: HttpResponse) -> (u16, Option<String>, String) {
        use futures_util::FutureExt as _;
        use http_body_util::BodyExt as _;
        let status = response.status().as_u16();
        let challenge = response
            .headers()
            .get(header::WWW_AUTHENTICATE)
            .map(|v| v.to_str().unwrap().to_owned());
        let HttpBody::Left(body) = response.into_body() else {
            panic!("a refusal is a whole body")
        };
        let bytes = body.collect().now_or_never().unwrap().unwrap().to_bytes();
        (
            status,
            challenge,
            String::from_utf8(bytes.to_vec()).unwrap(),
        )
    }

    /// The body of a refusal with -32600 and `message`.
    pub(crate) fn error_body(message: &str) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32600,"message":"{message}"}}}}"#)
    }

    #[test]
    fn statuses_follow_the_error_code() {
        let mut out = Vec::new();
        jsonrpc::write_error(
            &mut out,
            Some(jsonrpc::RequestId::from_json("12")),
            -32601,
            &"x",
        );
        assert_eq!(status_of(&out, "12"), StatusCode::NOT_FOUND);
        out.clear();
        jsonrpc::write_error(
            &mut out,
            Some(jsonrpc::RequestId::from_json("1")),
            -32022,
            &"x",
        );
        assert_eq!(status_of(&out, "1"), StatusCode::BAD_REQUEST);
        out.clear();
        jsonrpc::write_error(
            &mut out,
            Some(jsonrpc::RequestId::from_json("1")),
            -32603,
            &"x",
        );
        assert_eq!(status_of(&out, "1"), StatusCode::OK);
        out.clear();
        jsonrpc::write_result(&mut out, jsonrpc::RequestId::from_json("1"), b"{}");
        assert_eq!(status_of(&out, "1"), StatusCode::OK);
    }
}
