//! The client that made a call: where the call's progress and the tool's own
//! notifications go, whatever the transport.
//!
//! A transport gives each session (or, over HTTP, each request) a [`Peer`]
//! made with [`Peer::channel`] and sends what arrives on the receiver: as
//! messages of the connection over WebSocket and stdio, as SSE events before
//! the result over Streamable HTTP.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use crate::notify::{NotificationBytes, serialize};

/// Sends notifications to one client. Cheap to clone.
///
/// Never blocks: a notification that finds the client's queue full is
/// dropped (progress and log messages are hints), and a client that went
/// away is ignored.
#[derive(Clone, Debug)]
pub struct Peer {
    tx: Option<mpsc::Sender<NotificationBytes>>,
}

impl Peer {
    /// A peer and the receiver its notifications arrive on, at most
    /// `capacity` of them waiting.
    pub fn channel(capacity: usize) -> (Self, mpsc::Receiver<NotificationBytes>) {
        let (tx, rx) = mpsc::channel(capacity);
        (Self { tx: Some(tx) }, rx)
    }

    /// A peer that reaches no one: every send is a no-op.
    pub fn detached() -> Self {
        Self { tx: None }
    }

    /// Sends `{"jsonrpc":"2.0","method":<method>,"params":<params>}`; `false`
    /// when it was not queued (no client, queue full, params unserializable).
    pub fn notify<P: Serialize + ?Sized>(&self, method: &str, params: &P) -> bool {
        self.tx.is_some() && serialize(method, params).is_some_and(|b| self.send_bytes(b))
    }

    /// Sends an already serialized notification.
    pub fn send_bytes(&self, bytes: NotificationBytes) -> bool {
        self.tx
            .as_ref()
            .is_some_and(|tx| tx.try_send(bytes).is_ok())
    }
}

/// A [`Peer`] whose channel is made when a call first takes it: a request
/// whose tool never reports costs no channel (HTTP makes one per request).
#[derive(Debug)]
pub(crate) struct LazyPeer {
    capacity: usize,
    made: OnceLock<(Peer, mpsc::Receiver<NotificationBytes>)>,
}

impl LazyPeer {
    /// A peer of `capacity` waiting notifications, not made yet.
    pub(crate) const fn new(capacity: usize) -> Self {
        Self {
            capacity,
            made: OnceLock::new(),
        }
    }

    /// The peer, made now if no call took it before.
    pub(crate) fn get(&self) -> &Peer {
        &self.made.get_or_init(|| Peer::channel(self.capacity)).0
    }

    /// The peer and its receiver, if a call took the peer.
    pub(crate) fn into_made(self) -> Option<(Peer, mpsc::Receiver<NotificationBytes>)> {
        self.made.into_inner()
    }
}

/// Where a call's notifications go: a peer given, or one made on first use.
#[derive(Clone, Copy, Debug)]
pub(crate) enum PeerRef<'a> {
    Given(Option<&'a Peer>),
    Lazy(&'a LazyPeer),
}

impl<'a> PeerRef<'a> {
    pub(crate) fn get(self) -> Option<&'a Peer> {
        match self {
            Self::Given(peer) => peer,
            Self::Lazy(lazy) => Some(lazy.get()),
        }
    }
}

/// Reports a call's progress to its client as `notifications/progress`, for
/// the `progressToken` the client sent in the request's `_meta`.
///
/// A no-op when the client sent no token. MCP requires the progress value to
/// increase with each notification: a value not above the last one sent is
/// not sent.
#[derive(Clone, Debug)]
pub struct Progress {
    target: Option<Arc<(Peer, Box<RawValue>)>>,
    /// The bits of the last `f64` sent; starts below every value.
    last: Arc<AtomicU64>,
}

impl Progress {
    /// Progress for `token`, sent to `peer`.
    pub fn new(peer: Option<Peer>, token: Option<&RawValue>) -> Self {
        Self {
            target: peer
                .zip(token)
                .map(|(peer, token)| Arc::new((peer, token.to_owned()))),
            last: Arc::new(AtomicU64::new(f64::NEG_INFINITY.to_bits())),
        }
    }

    /// Whether the client asked for progress (and can be reached).
    pub fn is_requested(&self) -> bool {
        self.target.is_some()
    }

    /// Sends `progress` (of `total`, if known) with an optional message;
    /// `false` when nothing was sent.
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Params<'a> {
            progress_token: &'a RawValue,
            progress: f64,
            #[serde(skip_serializing_if = "Option::is_none")]
            total: Option<f64>,
            #[serde(skip_serializing_if = "Option::is_none")]
            message: Option<&'a str>,
        }
        let Some((peer, token)) = self.target.as_deref() else {
            return false;
        };
        let increased = self
            .last
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |last| {
                (progress > f64::from_bits(last)).then_some(progress.to_bits())
            })
            .is_ok();
        increased
            && peer.notify(
                "notifications/progress",
                &Params {
                    progress_token: token,
                    progress,
                    total,
                    message,
                },
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_goes_to_the_peer_for_the_token_and_only_increases() {
        let (peer, mut rx) = Peer::channel(8);
        let token = RawValue::from_string(r#""t1""#.into()).unwrap();
        let progress = Progress::new(Some(peer), Some(&token));
        assert!(progress.report(1.0, Some(4.0), Some("one")));
        assert!(!progress.report(1.0, None, None), "not increasing");
        assert!(progress.clone().report(2.5, None, None));
        assert_eq!(
            &*rx.try_recv().unwrap(),
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t1","progress":1.0,"total":4.0,"message":"one"}}"#
        );
        assert_eq!(
            &*rx.try_recv().unwrap(),
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t1","progress":2.5}}"#
        );
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn without_a_token_or_a_client_nothing_is_sent() {
        let (peer, mut rx) = Peer::channel(8);
        assert!(!Progress::new(Some(peer.clone()), None).report(1.0, None, None));
        let token = RawValue::from_string("1".into()).unwrap();
        assert!(!Progress::new(None, Some(&token)).report(1.0, None, None));
        assert!(!Peer::detached().notify("x", &()));
        drop(peer);
        assert!(rx.try_recv().is_err());
    }
}
