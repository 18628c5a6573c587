//! A request-scoped event stream: when a call sends notifications (its
//! progress) before its result, the POST is answered `text/event-stream`,
//! each notification an event, the result the last one, then the stream
//! ends. Dropping the body (the client closed the stream) aborts the task
//! that drives the call's session, and with it the call.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame};
use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use super::http_check::{HttpBody, HttpResponse};
use crate::notify::NotificationBytes;
use crate::session::Session;

/// Events waiting for a client that reads slowly; the call waits beyond it.
const SSE_QUEUE: usize = 16;

/// The body of an event-stream answer.
pub(crate) struct SseBody {
    rx: mpsc::Receiver<Bytes>,
    task: AbortHandle,
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

/// One JSON-RPC message as an SSE event.
fn event(message: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(message.len() + 24);
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(message);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// Answers with a stream: `first`, then every notification of `notes` and
/// the response, appended to `out` by `session` (or already there when
/// `done`).
pub(crate) fn stream(
    mut session: Session,
    mut notes: mpsc::Receiver<NotificationBytes>,
    first: &NotificationBytes,
    mut out: Vec<u8>,
    done: bool,
) -> HttpResponse {
    let (tx, rx) = mpsc::channel(SSE_QUEUE);
    let _ = tx.try_send(event(first));
    let task = tokio::spawn(async move {
        if !done {
            loop {
                tokio::select! {
                    biased;
                    Some(note) = notes.recv() => {
                        if tx.send(event(&note)).await.is_err() {
                            return;
                        }
                    }
                    () = session.complete(&mut out) => break,
                    () = tx.closed() => return,
                }
            }
        }
        // Notifications sent before the result go before it.
        while let Ok(note) = notes.try_recv() {
            if tx.send(event(&note)).await.is_err() {
                return;
            }
        }
        let _ = tx.send(event(&out)).await;
    });
    let body = SseBody {
        rx,
        task: task.abort_handle(),
    };
    let mut response = Response::new(HttpBody::Right(body));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
