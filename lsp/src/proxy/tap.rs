//! The proxy's own watch over its stream: the observer, and what it saw
//! sent on to its host.

use std::sync::{Arc, Mutex};

use super::pump::Watch;
use super::relay::{Copy, Upstream};
use super::shared::Shared;
use crate::host::link::Tag;
use crate::observer::{ClientVerdict, Interest, Observer, Overlay, Replayed, ServerVerdict};
use crate::sync::lock;

/// The watch the pumps call.
pub(crate) struct Tap {
    observer: Mutex<Observer>,
    interest: Arc<Interest>,
    upstream: Upstream,
}

impl Tap {
    /// A tap over `observer`.
    pub(crate) fn new(observer: Observer) -> Self {
        Self {
            interest: observer.interest(),
            observer: Mutex::new(observer),
            upstream: Upstream::default(),
        }
    }

    /// Shows the host's reviews: once everything handed over before has
    /// been observed (`watch` settled), so that no message the observer
    /// has not seen yet can be forwarded without the hunks after them.
    pub(crate) fn review(&self, overlay: Overlay, watch: &dyn Watch) {
        self.interest.set_reviewing(!overlay.reviews.is_empty());
        watch.settle();
        lock(&self.observer).set_review(overlay);
    }

    /// Which messages need the observer's verdict.
    pub(crate) fn interest(&self) -> Arc<Interest> {
        Arc::clone(&self.interest)
    }

    /// The link to the host.
    pub(crate) fn upstream(&self) -> &Upstream {
        &self.upstream
    }

    /// The messages that rebuild this stream's state in a host.
    pub(crate) fn replay(&self) -> Vec<Copy> {
        lock(&self.observer)
            .replay()
            .into_iter()
            .map(to_copy)
            .collect()
    }

    /// Observes a message queued for the observer thread with `observe`
    /// (its verdict moot) and sends its buffer, shared, to the host.
    fn observe_queued<R>(
        &self,
        tag: Tag,
        message: &Shared,
        observe: impl FnOnce(&mut Observer, &[u8]) -> R,
    ) {
        self.upstream.observe(
            tag,
            || message.clone(),
            || drop(observe(&mut lock(&self.observer), message.body())),
        );
    }
}

/// A replayed message as a relayed copy.
pub(crate) fn to_copy(replayed: Replayed) -> Copy {
    match replayed {
        Replayed::FromClient(body) => (Tag::FromEditor, Shared::of_body(body)),
        Replayed::FromServer(body) => (Tag::FromServer, Shared::of_body(body)),
    }
}

impl Watch for Tap {
    fn editor_message(&self, body: &[u8]) -> ClientVerdict {
        self.upstream.observe(
            Tag::FromEditor,
            || Shared::copy_of(body),
            || lock(&self.observer).from_client(body),
        )
    }

    fn server_message(&self, body: &[u8]) -> ServerVerdict {
        self.upstream.observe(
            Tag::FromServer,
            || Shared::copy_of(body),
            || lock(&self.observer).from_server(body),
        )
    }

    fn queued_editor_message(&self, message: &Shared) {
        self.observe_queued(Tag::FromEditor, message, Observer::from_client);
    }

    fn queued_server_message(&self, message: &Shared) {
        self.observe_queued(Tag::FromServer, message, Observer::from_server);
    }

    fn interest(&self) -> Option<Arc<Interest>> {
        Some(Arc::clone(&self.interest))
    }
}
