//! One POST, one request: served in the POST's own task by a
//! [`Session`] of its own, answered as JSON, or as an event stream
//! ([`sse`](super::sse)) when the call sends notifications
//! (progress) before its result. A 2026-07-28 request gets a fresh session
//! ([`exchange`]), after its routing headers were checked against the body
//! ([`header_mismatch`]); a request of a 2025-11-25 session, one resumed at
//! the session's version ([`serve`] with its
//! [`Ticket`](super::sessions::Ticket)).

use std::borrow::Cow;

use hyper::StatusCode;

use super::check::{Header, Heads};
use super::response::{HttpResponse, json_response, refusal, status_of};
use super::sessions::{RunningCall, Stop, Ticket};
use super::sse::{CALL_NOTES, stream};
use crate::era::{self, Era, HEADER_MISMATCH, Unsupported};
use crate::jsonrpc::{self, INVALID_REQUEST, REQUEST_CANCELLED, RequestId};
use crate::peer::{LazyPeer, PeerRef};
use crate::request::Request;
use crate::server::Server;
use crate::session::Session;

/// Serves a 2026-07-28 request on a session of its own: 200 with the
/// result, or the status its error maps to.
pub(crate) async fn exchange(server: &Server, request: &Request<'_>) -> HttpResponse {
    serve(Session::new(server.clone()), request, None, status_of).await
}

/// The first capacity of an answer's buffer: room for most answers (a
/// selection, a file's diagnostics) at once, where growing it on the way
/// costs a reallocation and a copy each time (BENCHMARKS.md § 6b).
const ANSWER_CAPACITY: usize = 1016;

/// Serves `request` on `session` and answers it: `status` of the JSON
/// response, or, when the call sends notifications (progress) before its
/// result, an event stream. A call that does not answer at once is
/// registered with `ticket`'s session while it runs, which can stop it
/// (`notifications/cancelled`, the session's end). Dropping the future (the
/// client closed the connection) drops the session, which aborts the call.
pub(crate) async fn serve(
    mut session: Session,
    request: &Request<'_>,
    ticket: Option<&Ticket<'_>>,
    status: fn(&[u8], &str) -> StatusCode,
) -> HttpResponse {
    let peer = LazyPeer::new(CALL_NOTES);
    let mut out = Vec::with_capacity(ANSWER_CAPACITY);
    let answered = session.handle_request(request, PeerRef::Lazy(&peer), &mut out);
    let id = request.id.as_json();
    // A tool that never took the peer reported nothing and never will.
    // The call holds its own handle on the peer; the receiver is ours.
    let made = peer.into_made();
    let late = ticket.map(Ticket::late);
    if answered {
        // Notifications sent before the result: streamed before it.
        if let Some((_, mut notes)) = made {
            if let Ok(first) = notes.try_recv() {
                return stream(notes, &first, Box::pin(std::future::ready(out)), late);
            }
            forward_late(notes, late);
        }
        return json_response(status(&out, id), out);
    }
    let mut running = ticket.map(|ticket| ticket.running(id));
    let done = async move {
        let stop = tokio::select! {
            biased;
            stop = stopped(&mut running) => Some(stop),
            () = session.complete(&mut out) => None,
        };
        (out, stop)
    };
    let Some((_, mut notes)) = made else {
        return answer(done.await, id, status);
    };
    let mut done = Box::pin(done);
    tokio::select! {
        biased;
        Some(first) = notes.recv() => {
            // The session goes with the stream: it runs the call.
            let id: Box<str> = id.into();
            let done = Box::pin(async move {
                match done.await {
                    (out, None) => out,
                    (_, Some(stop)) => stopped_answer(&id, stop),
                }
            });
            stream(notes, &first, done, late)
        }
        done = &mut done => match (done, notes.try_recv()) {
            // Notifications sent just before the result: streamed too.
            ((out, None), Ok(first)) => {
                stream(notes, &first, Box::pin(std::future::ready(out)), late)
            }
            (done, _) => {
                forward_late(notes, late);
                answer(done, id, status)
            }
        },
    }
}

/// Sends what a call of a session reports after its POST was answered to
/// the session's event stream (a tool that kept its [`Peer`](crate::Peer)).
fn forward_late(
    notes: tokio::sync::mpsc::Receiver<crate::notify::NotificationBytes>,
    late: Option<super::sessions::Late>,
) {
    if let Some(late) = late {
        tokio::spawn(late.forward(notes));
    }
}

/// The JSON answer to request `id` of a call that ran to its end (`None`)
/// or was stopped.
fn answer(
    done: (Vec<u8>, Option<Stop>),
    id: &str,
    status: fn(&[u8], &str) -> StatusCode,
) -> HttpResponse {
    match done {
        (out, None) => json_response(status(&out, id), out),
        (_, Some(Stop::Ended)) => refusal(StatusCode::NOT_FOUND, INVALID_REQUEST, &ENDED),
        (_, Some(Stop::Cancelled)) => {
            json_response(StatusCode::OK, stopped_answer(id, Stop::Cancelled))
        }
    }
}

async fn stopped(running: &mut Option<RunningCall>) -> Stop {
    match running {
        Some(running) => running.stopped().await,
        None => std::future::pending().await,
    }
}

/// Why a session's call stopped before answering, when its session ended.
const ENDED: &str = "the session ended before answering (DELETE, or idle too long)";

/// The response to request `id` (JSON text) of a call stopped before it answered.
fn stopped_answer(id: &str, stop: Stop) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    let id = Some(RequestId::from_json(id));
    match stop {
        Stop::Ended => jsonrpc::write_error(&mut out, id, INVALID_REQUEST, &ENDED),
        Stop::Cancelled => jsonrpc::write_error(
            &mut out,
            id,
            REQUEST_CANCELLED,
            &"the client cancelled the request (notifications/cancelled)",
        ),
    }
    out
}

/// Whether each routing header came once with the very bytes of the
/// body's value: the usual request, agreed by a compare. (Anything else is
/// looked at closely by [`header_mismatch`].)
fn headers_repeat_body(heads: &Heads<'_>, request: &Request<'_>) -> bool {
    let same = |header: Header<'_>, value: &str| {
        !header.repeated
            && header
                .first
                .is_some_and(|h| h.as_bytes() == value.as_bytes())
    };
    let Ok(Era::Stateless(version)) = &request.era else {
        return false;
    };
    same(heads.version, version)
        && same(heads.method, &request.method)
        && match request.call() {
            Ok(call) => same(heads.name, &call.name),
            Err(_) => heads.name.first.is_none(),
        }
}

/// 400 with -32020 when a 2026-07-28 request's headers disagree with its
/// body: `MCP-Protocol-Version` with `_meta`'s version, `Mcp-Method` with the
/// method, `Mcp-Name` with a `tools/call`'s tool; or when a routing header
/// comes twice (readers of the first and of the last copy would disagree).
pub(crate) fn header_mismatch(heads: &Heads<'_>, request: &Request<'_>) -> Option<HttpResponse> {
    if headers_repeat_body(heads, request) {
        return None;
    }
    let (id, method) = (request.id, &*request.method);
    let mismatch = |what: &dyn std::fmt::Display| {
        let mut out = Vec::with_capacity(160);
        jsonrpc::write_error(&mut out, Some(id), HEADER_MISMATCH, what);
        Some(json_response(StatusCode::BAD_REQUEST, out))
    };
    for (header, name) in [
        (heads.version, "MCP-Protocol-Version"),
        (heads.method, "Mcp-Method"),
        (heads.name, "Mcp-Name"),
    ] {
        if header.repeated {
            tracing::warn!(header = name, "HTTP request refused: duplicate header");
            return mismatch(&format_args!("duplicate `{name}` header"));
        }
    }
    let (Ok(version), Ok(method_header), Ok(name_header)) = (
        heads.version.single(),
        heads.method.single(),
        heads.name.single(),
    ) else {
        return mismatch(
            &"the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers must be visible ASCII",
        );
    };
    // The era and the tool as the session will serve them: the params
    // are read once.
    let body_version = match &request.era {
        Ok(Era::Stateless(version)) => Cow::Borrowed(*version),
        Ok(Era::Handshake) => {
            if let Some(v) = version.filter(|v| era::STATELESS_VERSIONS.contains(v)) {
                return mismatch(&format_args!(
                    "the MCP-Protocol-Version header says {v}, but the body's `params._meta` names no protocol version"
                ));
            }
            return None;
        }
        Err(Unsupported::Version(version)) => Cow::Borrowed(&**version),
        Err(Unsupported::NotAString) => return None, // the session says why
    };
    if version != Some(&*body_version) {
        return mismatch(&format_args!(
            "the MCP-Protocol-Version header ({}) does not match the body's `_meta` protocol version ({})",
            version.map_or("absent", jsonrpc::clip),
            jsonrpc::clip(&body_version)
        ));
    }
    if method_header != Some(method) {
        return mismatch(&format_args!(
            "the Mcp-Method header ({}) does not match the body's method ({})",
            method_header.map_or("absent", jsonrpc::clip),
            jsonrpc::clip(method)
        ));
    }
    if let Ok(call) = request.call() {
        let name = &call.name;
        if name_header != Some(&**name) {
            return mismatch(&format_args!(
                "the Mcp-Name header ({}) does not match the tool the body calls ({})",
                name_header.map_or("absent", jsonrpc::clip),
                jsonrpc::clip(name)
            ));
        }
    }
    None
}
