//! A request-scoped event stream: when a call sends notifications (its
//! progress) before its result, the POST is answered `text/event-stream`,
//! each notification an event, the result the last one, then the stream
//! ends. Both eras answer so: every POST's call runs on a session of its
//! own, fresh for a 2026-07-28 request, resumed at the negotiated version
//! for a request of a 2025-11-25 session. Dropping the body (the client
//! closed the stream) aborts the task that waits for the result, and with it
//! the call: its session is dropped.
//!
//! A session's own event stream (`GET /mcp`, [`listen`]) lasts until the
//! session ends or the client goes away: the latest states of the server's
//! [`Notifier`](crate::Notifier) first, then every notification it sends and
//! every one of the session's own sent outside a POST.

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use hyper::StatusCode;
use hyper::header::{self, HeaderValue};
use tokio::sync::mpsc;

use super::response::{HttpBody, HttpResponse, SseBody};
use super::sessions::{Late, Listening};
use crate::notify::{NotificationBytes, Notifier};

/// Events waiting for a client that reads slowly; the call waits beyond it.
const SSE_QUEUE: usize = 16;

/// How many notifications of one call may wait to be streamed (beyond it
/// they are dropped, as a [`Peer`](crate::Peer) drops what finds its queue
/// full).
pub(crate) const CALL_NOTES: usize = 64;

/// One JSON-RPC message as an SSE event.
fn event(message: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(message.len() + 24);
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(message);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// The response a stream ends with. Dropping it gives up on the call.
pub(crate) type Response = Pin<Box<dyn Future<Output = Vec<u8>> + Send>>;

/// Answers with a stream: `first`, then every notification of `notes`, then
/// `response` once it is ready; what `notes` receives after it goes to
/// `late`, when given (a session's event stream).
pub(crate) fn stream(
    mut notes: mpsc::Receiver<NotificationBytes>,
    first: &NotificationBytes,
    mut response: Response,
    late: Option<Late>,
) -> HttpResponse {
    let (tx, rx) = mpsc::channel(SSE_QUEUE);
    let _ = tx.try_send(event(first));
    let task = tokio::spawn(async move {
        let out = loop {
            tokio::select! {
                biased;
                Some(note) = notes.recv() => {
                    if tx.send(event(&note)).await.is_err() {
                        return;
                    }
                }
                out = &mut response => break out,
                () = tx.closed() => return,
            }
        };
        // Notifications sent before the result go before it.
        while let Ok(note) = notes.try_recv() {
            if tx.send(event(&note)).await.is_err() {
                return;
            }
        }
        let _ = tx.send(event(&out)).await;
        drop(tx); // the POST's stream ends here
        if let Some(late) = late {
            late.forward(notes).await;
        }
    });
    respond(SseBody::new(rx, task.abort_handle()))
}

/// Answers a GET with the session's event stream: the latest states of
/// `notifier`, then its notifications and the session's own, until the
/// session ends (or this stream is replaced) or the client goes away.
pub(crate) fn listen(notifier: &Notifier, listening: Listening) -> HttpResponse {
    let (tx, rx) = mpsc::channel(SSE_QUEUE);
    let mut server = notifier.subscribe();
    let latest = notifier.latest();
    let task = tokio::spawn(async move {
        let mut listening = listening;
        for note in latest {
            if tx.send(event(&note)).await.is_err() {
                return;
            }
        }
        loop {
            let note = tokio::select! {
                note = listening.notes.recv() => match note {
                    Some(note) => note,
                    None => return, // the session ended, or a new stream replaced this one
                },
                Some(note) = server.recv() => note,
                () = tx.closed() => return,
            };
            if tx.send(event(&note)).await.is_err() {
                return;
            }
        }
    });
    respond(SseBody::new(rx, task.abort_handle()))
}

/// A 200 `text/event-stream` answer with `body`.
fn respond(body: SseBody) -> HttpResponse {
    let mut response = hyper::Response::new(HttpBody::Right(body));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
