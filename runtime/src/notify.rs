//! Server-to-client notifications (the IDE protocol's `selection_changed`,
//! `at_mentioned`), pushed to every connected, initialized client.
//!
//! A notification that carries a *state* (the selection) is sent with
//! [`Notifier::notify_latest`], which also remembers it: a client that
//! connects later receives the latest state too, when it says it is ready
//! (the `claude` CLI's `ide_connected` notification) and once more
//! [`REPLAY_DELAY`] after it subscribed. The CLI starts listening only once
//! its UI has taken the connection, after `ide_connected` (15–170 ms after
//! connecting, longer on a loaded machine), and drops what came before: the
//! delayed copy is the one that reaches it.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::Serialize;
use tokio::sync::mpsc;

/// How many notifications may wait for one slow client before newer ones are
/// dropped for it (a notification is a hint; the client is never blocked on).
pub const NOTIFY_QUEUE: usize = 64;

/// A serialized JSON-RPC notification, shared by every client it goes to.
pub type NotificationBytes = Arc<[u8]>;

/// How long after a client subscribed (sent `notifications/initialized`) the
/// latest states are sent to it once more; see the module documentation.
/// Six times the longest delay seen before the CLI listens.
pub const REPLAY_DELAY: Duration = Duration::from_secs(1);

/// Pushes notifications to every connected, initialized client. Cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct Notifier {
    hub: Arc<Hub>,
}

#[derive(Debug, Default)]
struct Hub {
    clients: Mutex<Vec<mpsc::Sender<NotificationBytes>>>,
    /// The latest state notification of each method, in first-sent order.
    latest: Mutex<Vec<(String, NotificationBytes)>>,
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

    /// Sends like [`notify`](Self::notify), and remembers the notification
    /// as the latest state of `method`, replayed to clients that connect
    /// later (see the module documentation).
    pub fn notify_latest<P: Serialize + ?Sized>(&self, method: &str, params: &P) -> usize {
        let Some(bytes) = notification(method, params) else {
            return 0;
        };
        {
            let mut latest = lock(&self.hub.latest);
            match latest.iter_mut().find(|(m, _)| m == method) {
                Some((_, kept)) => *kept = Arc::clone(&bytes),
                None => latest.push((method.to_owned(), Arc::clone(&bytes))),
            }
        }
        self.send_bytes(&bytes)
    }

    /// Forgets the latest state of `method` (there is none any more, e.g.
    /// no file is active): clients that connect later receive nothing for it.
    pub fn forget_latest(&self, method: &str) {
        lock(&self.hub.latest).retain(|(m, _)| m != method);
    }

    /// The latest state notifications, in the order their methods were
    /// first sent: what a client that connects now is sent.
    pub fn latest(&self) -> Vec<NotificationBytes> {
        lock(&self.hub.latest)
            .iter()
            .map(|(_, bytes)| Arc::clone(bytes))
            .collect()
    }

    /// Sends an already serialized notification to every subscribed client.
    pub fn send_bytes(&self, bytes: &NotificationBytes) -> usize {
        let mut clients = lock(&self.hub.clients);
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
        lock(&self.hub.clients).push(tx);
        rx
    }

    /// How many clients are subscribed (closed ones are counted until the next send).
    pub fn client_count(&self) -> usize {
        lock(&self.hub.clients)
            .iter()
            .filter(|tx| !tx.is_closed())
            .count()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Each critical section leaves the data consistent: a panic elsewhere
    // does not poison it.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `{"jsonrpc":"2.0","method":<method>,"params":<params>}`, or `None` (logged)
/// when the params fail to serialize.
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
    let notification = Notification {
        jsonrpc: "2.0",
        method,
        params,
    };
    match serde_json::to_vec(&notification) {
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

    #[test]
    fn the_latest_state_is_kept_per_method_until_forgotten() {
        let notifier = Notifier::new();
        assert_eq!(notifier.notify_latest("selection_changed", &1), 0);
        notifier.notify_latest("other", &"x");
        notifier.notify_latest("selection_changed", &2);
        notifier.notify("selection_changed", &3); // not a state: not kept
        let latest: Vec<_> = notifier.latest().iter().map(|b| b.to_vec()).collect();
        assert_eq!(
            latest,
            [
                br#"{"jsonrpc":"2.0","method":"selection_changed","params":2}"#.to_vec(),
                br#"{"jsonrpc":"2.0","method":"other","params":"x"}"#.to_vec(),
            ]
        );
        notifier.forget_latest("selection_changed");
        assert_eq!(notifier.latest().len(), 1);
    }
}
