//! Server-to-client notifications (the IDE protocol's `selection_changed`,
//! `at_mentioned`), pushed to every connected, initialized client.

use std::sync::{Arc, Mutex};

use serde::Serialize;
use tokio::sync::mpsc;

/// How many notifications may wait for one slow client before newer ones are
/// dropped for it (a notification is a hint; the client is never blocked on).
pub const NOTIFY_QUEUE: usize = 64;

/// A serialized JSON-RPC notification, shared by every client it goes to.
pub type NotificationBytes = Arc<[u8]>;

/// Pushes notifications to every connected, initialized client. Cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct Notifier {
    hub: Arc<Hub>,
}

#[derive(Debug, Default)]
struct Hub {
    clients: Mutex<Vec<mpsc::Sender<NotificationBytes>>>,
}

impl Notifier {
    /// A notifier with no clients yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sends `{"jsonrpc":"2.0","method":<method>,"params":<params>}` to every
    /// subscribed client; returns how many clients it was queued for.
    ///
    /// Never blocks: a client whose queue is full misses this notification,
    /// and a client that went away is forgotten.
    pub fn notify<P: Serialize + ?Sized>(&self, method: &str, params: &P) -> usize {
        notification(method, params).map_or(0, |bytes| self.send_bytes(&bytes))
    }

    /// Sends an already serialized notification to every subscribed client.
    pub fn send_bytes(&self, bytes: &NotificationBytes) -> usize {
        let mut clients = self
            .hub
            .clients
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        clients.retain(|tx| !tx.is_closed());
        let mut sent = 0;
        for tx in clients.iter() {
            if tx.try_send(Arc::clone(bytes)).is_ok() {
                sent += 1;
            }
        }
        sent
    }

    /// Registers a client (called by a session once it is initialized).
    pub fn subscribe(&self) -> mpsc::Receiver<NotificationBytes> {
        let (tx, rx) = mpsc::channel(NOTIFY_QUEUE);
        self.hub
            .clients
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(tx);
        rx
    }

    /// How many clients are subscribed (closed ones are counted until the next send).
    pub fn client_count(&self) -> usize {
        self.hub
            .clients
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .filter(|tx| !tx.is_closed())
            .count()
    }
}

/// `{"jsonrpc":"2.0","method":<method>,"params":<params>}`, serialized once;
/// `None` (logged) when the params fail to serialize.
pub(crate) fn notification<P: Serialize + ?Sized>(
    method: &str,
    params: &P,
) -> Option<NotificationBytes> {
    #[derive(Serialize)]
    struct Notification<'a, P: ?Sized> {
        jsonrpc: &'static str,
        method: &'a str,
        params: &'a P,
    }
    match serde_json::to_vec(&Notification {
        jsonrpc: "2.0",
        method,
        params,
    }) {
        Ok(bytes) => Some(bytes.into()),
        Err(err) => {
            tracing::warn!(method, %err, "notification params failed to serialize; not sent");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_reach_every_subscriber_and_closed_ones_are_dropped() {
        let notifier = Notifier::new();
        let mut a = notifier.subscribe();
        let b = notifier.subscribe();
        drop(b);
        assert_eq!(
            notifier.notify("selection_changed", &serde_json::json!({"text": ""})),
            1
        );
        assert_eq!(
            &*a.try_recv().unwrap(),
            br#"{"jsonrpc":"2.0","method":"selection_changed","params":{"text":""}}"#
        );
        assert_eq!(notifier.client_count(), 1);
    }
}
