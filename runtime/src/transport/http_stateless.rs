//! 2026-07-28 over HTTP: one POST, one request, one answer, no session. The
//! routing headers are checked against the body before anything is served.

use std::borrow::Cow;

use hyper::StatusCode;

use super::http_check::{Heads, HttpResponse, json_response, status_of};
use super::http_sse::{CALL_NOTES, stream};
use crate::era::{self, Era, HEADER_MISMATCH, Unsupported};
use crate::jsonrpc;
use crate::peer::{LazyPeer, PeerRef};
use crate::server::Server;
use crate::session::{Request, Session};

/// Serves one request on a session of its own and answers it: 200 with the
/// result, or the status its error maps to; or, when the call sends
/// notifications (progress) before its result, an event stream
/// ([`http_sse`](super::http_sse)). Dropping the future (the client closed
/// the connection) drops the session, which aborts the running call.
pub(crate) async fn exchange(server: &Server, request: &Request<'_>) -> HttpResponse {
    let mut session = Session::new(server.clone());
    let peer = LazyPeer::new(CALL_NOTES);
    let mut out = Vec::with_capacity(256);
    let answered = session.handle_request(request, PeerRef::Lazy(&peer), &mut out);
    // A tool that never took the peer reported nothing and never will.
    // The call holds its own handle on the peer; the receiver is ours.
    let Some((_, mut notes)) = peer.into_made() else {
        if !answered {
            session.complete(&mut out).await;
        }
        return json_response(status_of(&out, request.id.as_json()), out);
    };
    if !answered {
        tokio::select! {
            biased;
            Some(first) = notes.recv() => {
                // The session goes with the stream: it runs the call.
                let response = Box::pin(async move {
                    session.complete(&mut out).await;
                    out
                });
                return stream(notes, &first, response);
            }
            () = session.complete(&mut out) => {}
        }
    }
    if let Ok(first) = notes.try_recv() {
        return stream(notes, &first, Box::pin(std::future::ready(out)));
    }
    json_response(status_of(&out, request.id.as_json()), out)
}

/// 400 with -32020 when a 2026-07-28 request's headers disagree with its
/// body: `MCP-Protocol-Version` with `_meta`'s version, `Mcp-Method` with the
/// method, `Mcp-Name` with a `tools/call`'s tool; or when a routing header
/// comes twice (readers of the first and of the last copy would disagree).
pub(crate) fn header_mismatch(heads: &Heads<'_>, request: &Request<'_>) -> Option<HttpResponse> {
    let (id, method) = (request.id, &*request.method);
    let mismatch = |what: &dyn std::fmt::Display| {
        let mut out = Vec::with_capacity(160);
        jsonrpc::write_error(&mut out, Some(id), HEADER_MISMATCH, what);
        Some(json_response(StatusCode::BAD_REQUEST, out))
    };
    let (Ok(version), Ok(method_header), Ok(name_header)) = (
        heads.version.single(),
        heads.method.single(),
        heads.name.single(),
    ) else {
        return mismatch(
            &"the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers must each come at most once, as visible ASCII",
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
