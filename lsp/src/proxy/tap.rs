//! The proxy's own watch over its stream: the observer, and a copy of what
//! it saw for the leader when this proxy follows one.

use std::sync::{Mutex, PoisonError};

use super::pump::Watch;
use super::relay::{Copy, Direction, Upstream};
use crate::observer::{ClientVerdict, Observer, Replayed, ServerVerdict};

/// The watch the pumps call.
pub(crate) struct Tap {
    observer: Mutex<Observer>,
    upstream: Upstream,
}

impl Tap {
    /// A tap over `observer`.
    pub(crate) fn new(observer: Observer) -> Self {
        Self {
            observer: Mutex::new(observer),
            upstream: Upstream::default(),
        }
    }

    /// The link to the leader.
    pub(crate) fn upstream(&self) -> &Upstream {
        &self.upstream
    }

    /// The messages that rebuild this stream's state in a leader.
    pub(crate) fn replay(&self) -> Vec<Copy> {
        self.lock().replay().into_iter().map(to_copy).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Observer> {
        self.observer.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A replayed message as a relayed copy.
pub(crate) fn to_copy(replayed: Replayed) -> Copy {
    match replayed {
        Replayed::FromClient(body) => (Direction::FromEditor, body),
        Replayed::FromServer(body) => (Direction::FromServer, body),
    }
}

impl Watch for Tap {
    fn editor_message(&self, body: &[u8]) -> ClientVerdict {
        self.upstream.observe(Direction::FromEditor, body, || {
            self.lock().from_client(body)
        })
    }

    fn server_message(&self, body: &[u8]) -> ServerVerdict {
        self.upstream.observe(Direction::FromServer, body, || {
            self.lock().from_server(body)
        })
    }
}
